import { compileGlob, isGlobPattern, type GlobMatcher } from "../glob/index.js";
import type { ClassificationOverride } from "../policy/types.js";
import {
  CATEGORIES,
  RISK_LEVELS,
  findUnreadableName,
  foldGlobPattern,
  foldName,
  type ActionRequest,
  type Category,
  type RiskLevel,
  type ToolAnnotations,
} from "../request/index.js";
import {
  CATEGORY_DEFAULT_RISK,
  DEFAULT_CLASSIFICATION,
  findBuiltinClassification,
  type BuiltinClassification,
} from "./builtin-table.js";

/** Where a classification came from, highest precedence first. */
export type ClassificationSource = "explicit" | "policy" | "annotations" | "builtin" | "default";

/** The category and risk of one request, and the layer that decided them. */
export interface Classification {
  readonly category: Category;
  readonly risk_level: RiskLevel;
  /** The highest-precedence layer that contributed the category or the risk. */
  readonly source: ClassificationSource;
}

/** Policy `classify:` overrides with their globs compiled once. */
export interface CompiledOverrides {
  readonly entries: readonly {
    readonly override: ClassificationOverride;
    readonly tool: GlobMatcher;
    /** The tool pattern folded ({@link foldGlobPattern}), against the folded name. */
    readonly foldedTool: GlobMatcher;
    readonly server: GlobMatcher | undefined;
    /** The server pattern folded, against the folded server name. */
    readonly foldedServer: GlobMatcher | undefined;
  }[];
}

interface Layer {
  readonly source: ClassificationSource;
  readonly category?: Category | undefined;
  readonly risk_level?: RiskLevel | undefined;
}

/** Thrown when a `classify:` override cannot be compiled (the evaluator turns it into a refusal). */
function compileOverrideGlob(pattern: string, where: string): GlobMatcher {
  const unreadable = findUnreadableName(pattern);
  if (unreadable !== undefined)
    throw new Error(`while reading classify override ${where}: a name never holds ${unreadable}`);
  const result = compileGlob(pattern);
  if (result.ok) return result.value;
  const reason = result.issues.map((i) => i.message).join("; ");
  throw new Error(`while reading classify override ${where}: ${reason}`);
}

/** A pattern's folded form as a matcher of folded names: exact for an exact name, else the folded glob. */
function compileFoldedGlob(pattern: string): GlobMatcher {
  const folded = foldGlobPattern(pattern);
  if (!isGlobPattern(pattern)) return (name) => name === folded;
  const result = compileGlob(folded);
  return result.ok ? result.value : () => false;
}

/**
 * Compiles policy `classify:` overrides (tool and server globs). Throws on an invalid glob, naming the
 * override; the policy parser has normally rejected it already.
 */
export function compileClassificationOverrides(overrides: readonly ClassificationOverride[]): CompiledOverrides {
  return {
    entries: overrides.map((override, i) => ({
      override,
      tool: compileOverrideGlob(override.tool, `#${i + 1} \`${override.tool}\``),
      foldedTool: compileFoldedGlob(override.tool),
      server: override.server === undefined ? undefined : compileOverrideGlob(override.server, `#${i + 1}`),
      foldedServer: override.server === undefined ? undefined : compileFoldedGlob(override.server),
    })),
  };
}

const overrideCache = new WeakMap<readonly ClassificationOverride[], CompiledOverrides>();

const NO_OVERRIDES: CompiledOverrides = { entries: [] };

function cachedOverrides(overrides: readonly ClassificationOverride[]): CompiledOverrides {
  if (overrides.length === 0) return NO_OVERRIDES;
  let compiled = overrideCache.get(overrides);
  if (compiled === undefined) {
    compiled = compileClassificationOverrides(overrides);
    overrideCache.set(overrides, compiled);
  }
  return compiled;
}

function assertKnown<T extends string>(value: unknown, known: readonly T[], what: string): T | undefined {
  if (value === undefined) return undefined;
  if (typeof value === "string" && (known as readonly string[]).includes(value)) return value as T;
  const shown = typeof value === "string" ? value : typeof value;
  throw new TypeError(`invalid request: unknown ${what} \`${shown}\` (expected ${known.join(", ")})`);
}

function policyLayer(request: ActionRequest, compiled: CompiledOverrides, folded = false): Layer | undefined {
  const name = folded ? foldName(request.tool) : request.tool;
  const server = folded && request.server !== undefined ? foldName(request.server) : request.server;
  for (const entry of compiled.entries) {
    if (!(folded ? entry.foldedTool(name) : entry.tool(name))) continue;
    const serverTest = folded ? entry.foldedServer : entry.server;
    if (serverTest !== undefined && (server === undefined || !serverTest(server))) continue;
    return { source: "policy", category: entry.override.category, risk_level: entry.override.risk_level };
  }
  return undefined;
}

/**
 * What explicit MCP annotations say: read-only → read/low; destructive → write/high (it may delete or
 * overwrite what it writes: MCP's "destructive updates to its environment"; running commands, deploying
 * and dropping are `system` by name); additive → write/medium.
 */
function annotationLayer(annotations: ToolAnnotations | undefined): Layer | undefined {
  if (annotations === undefined || annotations === null || typeof annotations !== "object") return undefined;
  if (annotations.readOnlyHint === true) return { source: "annotations", category: "read", risk_level: "low" };
  if (annotations.destructiveHint === true) return { source: "annotations", category: "write", risk_level: "high" };
  if (annotations.readOnlyHint === false && annotations.destructiveHint === false) {
    return { source: "annotations", category: "write", risk_level: "medium" };
  }
  return undefined;
}

function impliedRisk(layer: Layer): RiskLevel | undefined {
  return layer.risk_level ?? (layer.category === undefined ? undefined : CATEGORY_DEFAULT_RISK[layer.category]);
}

function riskRank(risk: RiskLevel): number {
  return RISK_LEVELS.indexOf(risk);
}

/** The built-in table row or the default, with annotations allowed to replace it only where they do not loosen it. */
function baseLayers(request: ActionRequest): Layer[] {
  const row = findBuiltinClassification(request.tool);
  const base: Layer =
    row === undefined
      ? { source: "default", ...DEFAULT_CLASSIFICATION }
      : { source: "builtin", category: row.category, risk_level: row.risk_level };
  const hinted = annotationLayer(request.annotations);
  if (hinted === undefined) return [base];
  if (row === undefined) return [hinted, base];
  // Annotations come from the server, which we do not trust to loosen a decision: they may replace the
  // default for a name the table does not know, and may tighten the table, never loosen it. A table row
  // keeps its category (a shell marked destructive stays `system`), except that a "read" the server says
  // is not read-only leaves `read`; the risk is the higher of the two.
  const category = row.category === "read" && hinted.category !== undefined ? hinted.category : row.category;
  const hintedRisk = impliedRisk(hinted) ?? "low";
  const risk = riskRank(hintedRisk) > riskRank(row.risk_level) ? hintedRisk : row.risk_level;
  if (category === row.category && risk === row.risk_level) return [base];
  return [{ source: "annotations", category, risk_level: risk }, base];
}

const BUILTIN_RESULTS = new Map<BuiltinClassification, Classification>();
const DEFAULT_RESULT: Classification = Object.freeze({ ...DEFAULT_CLASSIFICATION, source: "default" });

/** The common case — no explicit fields, overrides or annotations: a table lookup, no allocation. */
function classifyByName(tool: string): Classification {
  const row = findBuiltinClassification(tool);
  if (row === undefined) return DEFAULT_RESULT;
  let result = BUILTIN_RESULTS.get(row);
  if (result === undefined) {
    result = Object.freeze({ category: row.category, risk_level: row.risk_level, source: "builtin" as const });
    BUILTIN_RESULTS.set(row, result);
  }
  return result;
}

/** Folds layers, highest precedence first: the category of the first that names one, the risk likewise. */
function fold(layers: readonly Layer[]): Classification {
  let category: Category | undefined;
  let risk: RiskLevel | undefined;
  let source: ClassificationSource | undefined;
  for (const layer of layers) {
    const before = source;
    if (category === undefined && layer.category !== undefined) category = layer.category;
    if (risk === undefined) risk = impliedRisk(layer);
    if (before === undefined && (category !== undefined || risk !== undefined)) source = layer.source;
  }
  // The base layer always carries both fields, so these fallbacks only satisfy the type checker.
  return {
    category: category ?? DEFAULT_CLASSIFICATION.category,
    risk_level: risk ?? DEFAULT_CLASSIFICATION.risk_level,
    source: source ?? "default",
  };
}

/** The layers below the request's own fields: the policy's `classify:`, annotations, the table or the default. */
function derivedLayers(request: ActionRequest, compiled: CompiledOverrides): Layer[] {
  const layers: Layer[] = [];
  const fromPolicy = policyLayer(request, compiled);
  if (fromPolicy !== undefined) layers.push(fromPolicy);
  const base = baseLayers(request);
  layers.push(...base);
  // the entry the names meet as a person reads them ({@link foldName}: `wіre_money` with a Cyrillic `і`
  // is `wire_money`, `Payments` is `payments`) decides instead when its risk is higher: another spelling
  // never escapes an entry, and never gets a lower one
  const viaFold = compiled.entries.length === 0 ? undefined : policyLayer(request, compiled, true);
  if (viaFold === undefined) return layers;
  const alternative = [viaFold, ...base];
  return riskRank(fold(alternative).risk_level) > riskRank(fold(layers).risk_level) ? alternative : layers;
}

/**
 * The request's *claimed* classification, overrides already compiled: its own `category` / `risk_level`
 * first, then the lower layers. What a caller says about itself; the evaluator lets it make a decision
 * stricter, never looser (see {@link classifyDerivedWithCompiled}).
 */
export function classifyWithCompiled(request: ActionRequest, compiled: CompiledOverrides): Classification {
  if (typeof request.tool !== "string") throw new TypeError("invalid request: `tool` must be a string");
  if (
    request.category === undefined &&
    request.risk_level === undefined &&
    request.annotations === undefined &&
    compiled.entries.length === 0
  ) {
    return classifyByName(request.tool);
  }
  const explicit: Layer = {
    source: "explicit",
    category: assertKnown(request.category, CATEGORIES, "category"),
    risk_level: assertKnown(request.risk_level, RISK_LEVELS, "risk level"),
  };
  return fold([explicit, ...derivedLayers(request, compiled)]);
}

/**
 * The request's *derived* classification, overrides already compiled: the policy's `classify:`, MCP
 * annotations, the built-in table, the default — the request's own `category` and `risk_level` ignored
 * (they are not checked here either). The source is never `explicit`. Without explicit fields this is
 * {@link classifyWithCompiled}.
 */
export function classifyDerivedWithCompiled(request: ActionRequest, compiled: CompiledOverrides): Classification {
  if (typeof request.tool !== "string") throw new TypeError("invalid request: `tool` must be a string");
  if (request.annotations === undefined && compiled.entries.length === 0) return classifyByName(request.tool);
  return fold(derivedLayers(request, compiled));
}

/** The higher of two risk levels. */
export function higherRisk(a: RiskLevel, b: RiskLevel): RiskLevel {
  return riskRank(a) >= riskRank(b) ? a : b;
}

/**
 * What a decision reports when no policy rule chose between the claimed and the derived classification
 * (no policy source; an evaluation error): the derived category, and the higher of the two risks, so a
 * caller's own fields can raise the reported risk but never lower it. Throws like
 * {@link classifyWithCompiled} on an unknown explicit category or risk.
 */
export function classifyGuardedWithCompiled(request: ActionRequest, compiled: CompiledOverrides): Classification {
  const claimed = classifyWithCompiled(request, compiled);
  if (request.category === undefined && request.risk_level === undefined) return claimed;
  const derived = classifyDerivedWithCompiled(request, compiled);
  if (riskRank(claimed.risk_level) <= riskRank(derived.risk_level)) return derived;
  return { category: derived.category, risk_level: claimed.risk_level, source: "explicit" };
}

/**
 * Classifies a request as it claims to be: explicit request fields > the first matching policy `classify:`
 * override > MCP tool annotations (which may tighten but never loosen the built-in table) > the built-in
 * name table (§5.5) > the default `write`/`medium`. A layer naming a category without a risk implies that
 * category's default risk. Throws a TypeError on a request with a non-string tool or an unknown explicit
 * category or risk.
 *
 * The explicit fields come from the caller, which is not trusted to loosen a decision: the evaluator judges
 * a request under this classification *and* {@link classifyDerived}, and the stricter route wins.
 */
export function classifyAction(request: ActionRequest, overrides: readonly ClassificationOverride[]): Classification {
  return classifyWithCompiled(request, cachedOverrides(overrides));
}

/** {@link classifyDerivedWithCompiled} with uncompiled overrides: the classification without the request's own fields. */
export function classifyDerived(request: ActionRequest, overrides: readonly ClassificationOverride[]): Classification {
  return classifyDerivedWithCompiled(request, cachedOverrides(overrides));
}

/** {@link classifyGuardedWithCompiled} with uncompiled overrides. */
export function classifyGuarded(request: ActionRequest, overrides: readonly ClassificationOverride[]): Classification {
  return classifyGuardedWithCompiled(request, cachedOverrides(overrides));
}

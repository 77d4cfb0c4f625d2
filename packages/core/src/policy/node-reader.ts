import { isAlias, isMap, isScalar, isSeq, visit, type Document, type LineCounter, type Node } from "yaml";
import type { Issue } from "../issues/index.js";
import { suggest } from "../suggest/index.js";
import type { PolicyIssueCode } from "./issue-codes.js";
import { checkAliasExpansion } from "./alias-expansion.js";
import { MAX_ALIAS_COUNT, MAX_ALIAS_EXPANSION } from "./limits.js";
import { positionAt } from "./source-position.js";
import { oneLine, showInput } from "./show-input.js";

/** A path from the document root, as issues carry it. */
export type NodePath = readonly (string | number)[];

/** State shared while reading one document: where issues go and how aliases resolve. */
export interface ReadContext {
  readonly issues: Issue[];
  readonly lines: LineCounter;
  /** Each alias in the document mapped to the node it names (absent when the anchor is unknown). */
  readonly aliases: ReadonlyMap<Node, Node>;
}

/** Where a value sits: its path, and the prefix that names the enclosing rule in messages. */
export interface Scope {
  readonly path: NodePath;
  /** `while reading rule \`send-mail\`: ` or empty at the top level. */
  readonly prefix: string;
}

/** One key of a mapping, as read: `node` is the value (aliases resolved), `null` for a YAML null. */
export interface Field {
  readonly name: string;
  readonly node: Node | null;
  /** Offset of the value (or of its key when the value is missing). */
  readonly offset: number;
  /** Offset of the key. */
  readonly keyOffset: number;
  readonly path: NodePath;
}

/** Records an issue at a character offset. */
export function report(
  ctx: ReadContext,
  offset: number,
  code: PolicyIssueCode,
  path: NodePath,
  message: string,
  help?: string,
): void {
  ctx.issues.push({
    code,
    path,
    message: oneLine(message),
    ...positionAt(ctx.lines, offset),
    ...(help !== undefined ? { help: oneLine(help) } : {}),
  });
}

/** Start offset of a node (0 when unknown). */
export function offsetOf(node: Node | null | undefined): number {
  return node?.range?.[0] ?? 0;
}

/**
 * Maps every alias to its anchor (the last one defined before it, as YAML says), counting aliases:
 * over {@link MAX_ALIAS_COUNT} is an issue, and so are aliases standing for more than
 * {@link MAX_ALIAS_EXPANSION} values in all or one inside its own anchor's node ({@link checkAliasExpansion}).
 * Unknown anchors are issues. Returns `undefined` when reading must stop.
 */
export function indexAliases(doc: Document.Parsed, lines: LineCounter, issues: Issue[]): Map<Node, Node> | undefined {
  const anchors = new Map<string, Node>();
  const aliases = new Map<Node, Node>();
  const ctx: ReadContext = { issues, lines, aliases };
  let count = 0;
  let stop = false;
  visit(doc, {
    Node(_key, node) {
      if (isAlias(node)) {
        count++;
        if (count > MAX_ALIAS_COUNT) {
          report(ctx, offsetOf(node), "too_many_aliases", [], `more than ${MAX_ALIAS_COUNT} aliases`);
          stop = true;
          return visit.BREAK;
        }
        const target = anchors.get(node.source);
        if (target === undefined) report(ctx, offsetOf(node), "unknown_alias", [], `unknown alias \`*${node.source}\``);
        else aliases.set(node, target);
      } else if (node.anchor !== undefined) {
        anchors.set(node.anchor, node);
      }
      return undefined;
    },
  });
  if (stop) return undefined;
  const fault = count > 0 ? checkAliasExpansion(doc.contents, aliases, MAX_ALIAS_EXPANSION) : undefined;
  if (fault === undefined) return aliases;
  if (fault.kind === "recursive") {
    const message = `alias \`*${showInput(fault.name)}\` is inside the node its own anchor \`&${showInput(fault.name)}\` names`;
    report(
      ctx,
      offsetOf(fault.alias),
      "recursive_alias",
      [],
      message,
      "a policy cannot hold itself; write the value out",
    );
  } else {
    const message = `aliases stand for more than ${MAX_ALIAS_EXPANSION} values in all`;
    const help = "write the repeated part out, or fewer aliases of large anchors";
    report(ctx, offsetOf(fault.alias), "alias_expansion_too_large", [], message, help);
  }
  return undefined;
}

/** Follows an alias to its node (once: an anchor's node is never itself an alias). `undefined`: unknown alias. */
export function resolveNode(ctx: ReadContext, node: Node | null): Node | null | undefined {
  if (node === null || !isAlias(node)) return node;
  return ctx.aliases.get(node);
}

/** A short description of what a value is, for "got …" messages. */
export function describeNode(node: Node | null): string {
  if (node === null) return "nothing";
  if (isMap(node)) return "a mapping";
  if (isSeq(node)) return "a list";
  if (!isScalar(node)) return "an unsupported value";
  const value = node.value;
  if (value === null) return "null";
  if (typeof value === "string") return `the string \`${showInput(value)}\``;
  if (typeof value === "number") return `the number \`${showInput(String(value))}\``;
  if (typeof value === "boolean") return `\`${String(value)}\``;
  return "an unsupported value";
}

/** Reports that a value has the wrong type. */
export function reportType(ctx: ReadContext, scope: Scope, field: Field, expected: string, help?: string): void {
  const message = `${scope.prefix}\`${showInput(field.name)}\` must be ${expected}, got ${describeNode(field.node)}`;
  report(ctx, field.offset, "wrong_type", field.path, message, help);
}

/** The scalar value of a node, or `undefined` when it is a collection. */
export function scalarValue(node: Node | null): unknown {
  if (node === null) return null;
  return isScalar(node) ? node.value : undefined;
}

/** Formats `a, b or c`. */
export function listWords(words: readonly string[]): string {
  if (words.length <= 1) return words.join("");
  return `${words.slice(0, -1).join(", ")} or ${words[words.length - 1] ?? ""}`;
}

/** Options for {@link readMappingFields}. */
export interface MappingShape {
  /** How the mapping is named in messages (`rule`, `match`, …). */
  readonly name: string;
  /** Whether messages say where the key is (` in \`match\``); off for a rule's own keys. */
  readonly nameInMessages: boolean;
  /** The keys allowed; `undefined` allows any string key (as in `args`). */
  readonly known: readonly string[] | undefined;
  /** Keys people write by mistake mapped to the intended key (`risk_level` → `level`). */
  readonly synonyms?: Readonly<Record<string, string>>;
}

/**
 * Reads a mapping's keys: reports non-string keys, duplicate keys and unknown keys (with a did-you-mean
 * suggestion), and returns the known fields by name. The caller has checked that `node` is a mapping.
 */
export function readMappingFields(ctx: ReadContext, node: Node, scope: Scope, shape: MappingShape): Map<string, Field> {
  const fields = new Map<string, Field>();
  if (!isMap(node)) return fields;
  const seen = new Map<string, number>();
  const where = shape.nameInMessages ? ` in \`${shape.name}\`` : "";
  for (const pair of node.items) {
    const keyNode = pair.key as Node | null;
    const key = scalarValue(resolveNode(ctx, keyNode) ?? null);
    const keyOffset = offsetOf(keyNode);
    if (typeof key !== "string") {
      const got = describeNode(keyNode);
      report(
        ctx,
        keyOffset,
        "wrong_type",
        scope.path,
        `${scope.prefix}keys of \`${shape.name}\` must be strings, got ${got}`,
      );
      continue;
    }
    const path = [...scope.path, key];
    const first = seen.get(key);
    if (first !== undefined) {
      const at = positionAt(ctx.lines, first);
      const message = `${scope.prefix}duplicate key \`${showInput(key)}\`${where} (first at line ${at.line})`;
      report(ctx, keyOffset, "duplicate_key", path, message, "remove one of them");
      continue;
    }
    seen.set(key, keyOffset);
    if (shape.known !== undefined && !shape.known.includes(key)) {
      const better = suggest(key, shape.known, shape.synonyms);
      const help = better !== undefined ? `did you mean \`${better}\`` : `expected ${listWords(shape.known)}`;
      report(ctx, keyOffset, "unknown_key", path, `${scope.prefix}unknown key \`${showInput(key)}\`${where}`, help);
      continue;
    }
    const raw = pair.value as Node | null;
    const value = resolveNode(ctx, raw);
    if (value === undefined) continue;
    fields.set(key, { name: key, node: value, offset: valueOffset(raw, keyOffset), keyOffset, path });
  }
  return fields;
}

/** Where to point at a value: the value itself, or its key when the value is empty (`action:`). */
function valueOffset(raw: Node | null, keyOffset: number): number {
  const range = raw?.range;
  if (raw === null || range === undefined || range === null) return keyOffset;
  if (isScalar(raw) && raw.value === null && range[0] === range[1]) return keyOffset;
  return range[0];
}

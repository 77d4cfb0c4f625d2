/**
 * `lintConsentGraph`: every validation issue, plus what makes a valid graph dangerous or ambiguous —
 * an action in more than one tier, a duplicate, a domain missing a tier list, an empty domain,
 * a `trusted_channel_required` action that is in no tier, a graph with no domains.
 */
import type { Issue } from "../issues/index.js";
import { positionKey, type PositionEntry } from "./json-source.js";
import { consentGraphToJson } from "./hash.js";
import { readConsentGraphJson } from "./parse.js";
import { GRAPH_TIERS } from "./types.js";
import { RESERVED_GRAPH_KEYS, isConsentGraph, validateConsentGraph } from "./validate.js";

type Path = readonly (string | number)[];
type Positions = ReadonlyMap<string, PositionEntry> | undefined;

function issueAt(positions: Positions, code: string, path: Path, message: string, help?: string): Issue {
  const entry = positions?.get(positionKey(path));
  const place = path.length === 1 ? (entry?.key ?? entry?.value) : entry?.value;
  return {
    code,
    path,
    message,
    ...(place !== undefined ? { line: place.line, column: place.column } : {}),
    ...(help !== undefined ? { help } : {}),
  };
}

function stringsOf(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

function lintTiers(name: string, domain: Record<string, unknown>, positions: Positions): Issue[] {
  const issues: Issue[] = [];
  const seen = new Map<string, string>();
  for (const tier of GRAPH_TIERS) {
    const list = domain[tier];
    if (list === undefined) {
      const message = `domain \`${name}\` has no \`${tier}\` list`;
      issues.push(issueAt(positions, "missing_tier", [name], message, "list every tier, even when empty: `[]`"));
      continue;
    }
    if (!Array.isArray(list)) continue;
    list.forEach((action: unknown, i) => {
      if (typeof action !== "string") return;
      const first = seen.get(action);
      const path = [name, tier, i];
      if (first === tier) {
        issues.push(
          issueAt(positions, "duplicate_action", path, `\`${name}.${action}\` is listed twice in \`${tier}\``),
        );
      } else if (first !== undefined) {
        const message = `\`${name}.${action}\` is in both \`${first}\` and \`${tier}\` (the stricter tier applies)`;
        issues.push(issueAt(positions, "action_in_several_tiers", path, message, "keep it in exactly one list"));
      } else {
        seen.set(action, tier);
      }
    });
  }
  if (seen.size === 0 && GRAPH_TIERS.some((tier) => Array.isArray(domain[tier]))) {
    const message = `domain \`${name}\` classifies no action (every action in it is refused as unclassified)`;
    issues.push(issueAt(positions, "empty_domain", [name], message));
  }
  stringsOf(domain["trusted_channel_required"]).forEach((action, i) => {
    if (seen.has(action)) return;
    const message = `\`${name}.${action}\` is in \`trusted_channel_required\` but in no tier`;
    const path = [name, "trusted_channel_required", i];
    issues.push(issueAt(positions, "trusted_channel_unclassified", path, message, "add it to one of the three tiers"));
  });
  return issues;
}

function lintRaw(raw: unknown, positions: Positions): Issue[] {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return [];
  const issues: Issue[] = [];
  let domains = 0;
  for (const [name, value] of Object.entries(raw as Record<string, unknown>)) {
    if ((RESERVED_GRAPH_KEYS as readonly string[]).includes(name)) continue;
    if (typeof value !== "object" || value === null || Array.isArray(value)) continue;
    domains++;
    issues.push(...lintTiers(name, value as Record<string, unknown>, positions));
  }
  if (domains === 0) {
    issues.push(issueAt(positions, "empty_graph", [], "the consent graph has no domains, so every action is refused"));
  }
  return issues;
}

function byPlace(a: Issue, b: Issue): number {
  return (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0);
}

/**
 * Lints a consent graph given as JSON text (issues carry line and column), as a raw object, or as a
 * parsed `ConsentGraph` (`input: ConsentGraph | string | unknown`). Returns every validation and lint issue, in source order; empty when clean.
 */
export function lintConsentGraph(input: unknown): Issue[] {
  try {
    if (typeof input === "string") {
      const json = readConsentGraphJson(input);
      if (!json.ok) return [...json.issues];
      const { value, positions } = json.value;
      const validation = validateConsentGraph(value, positions);
      const issues = [...(validation.ok ? [] : validation.issues), ...lintRaw(value, positions)];
      return issues.sort(byPlace);
    }
    const raw = isConsentGraph(input) ? consentGraphToJson(input) : input;
    const validation = validateConsentGraph(raw);
    return [...(validation.ok ? [] : validation.issues), ...lintRaw(raw, undefined)];
  } catch (err) {
    const message = `internal error while linting the graph: ${err instanceof Error ? err.message : String(err)}`;
    return [{ code: "graph_error", path: [], message }];
  }
}

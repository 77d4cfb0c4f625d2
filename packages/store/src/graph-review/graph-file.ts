import { readFileSync, statSync } from "node:fs";
import { MAX_GRAPH_LENGTH, parseConsentGraph, type ConsentGraph, type Issue } from "@acp/core";

/** The consent graph file as read from disk. */
export type ConsentGraphFile =
  | { readonly status: "missing"; readonly path: string }
  | { readonly status: "invalid"; readonly path: string; readonly issues: readonly Issue[]; readonly text?: string }
  | { readonly status: "ok"; readonly path: string; readonly graph: ConsentGraph; readonly text: string };

function ioIssue(path: string, err: unknown): Issue {
  const message = `cannot read consent graph \`${path}\`: ${err instanceof Error ? err.message : String(err)}`;
  return { code: "graph_error", path: [], message };
}

/**
 * Reads graph text without parsing it: missing, unreadable and oversized files (refused before reading)
 * come back as such.
 */
export function readConsentGraphText(
  path: string,
): { readonly status: "ok"; readonly text: string } | Exclude<ConsentGraphFile, { status: "ok" }> {
  try {
    const stat = statSync(path);
    if (!stat.isFile()) return { status: "invalid", path, issues: [ioIssue(path, new Error("not a regular file"))] };
    if (stat.size > MAX_GRAPH_LENGTH * 4) {
      const message = `graph too large: ${stat.size} bytes (limit ${MAX_GRAPH_LENGTH} characters)`;
      return { status: "invalid", path, issues: [{ code: "graph_too_large", path: [], message }] };
    }
    return { status: "ok", text: readFileSync(path, "utf8") };
  } catch (err) {
    if (typeof err === "object" && err !== null && (err as { code?: unknown }).code === "ENOENT") {
      return { status: "missing", path };
    }
    return { status: "invalid", path, issues: [ioIssue(path, err)] };
  }
}

/** Reads and parses a consent graph file. */
export function loadConsentGraphFile(path: string): ConsentGraphFile {
  const read = readConsentGraphText(path);
  if (read.status !== "ok") return read;
  const parsed = parseConsentGraph(read.text, { file: path });
  if (!parsed.ok) return { status: "invalid", path, issues: parsed.issues, text: read.text };
  return { status: "ok", path, graph: parsed.value, text: read.text };
}

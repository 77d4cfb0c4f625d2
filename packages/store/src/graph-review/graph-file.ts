import { lstatSync, statSync } from "node:fs";
import { MAX_GRAPH_LENGTH, parseConsentGraph, type ConsentGraph, type Issue } from "@acp/core";
import { NotRegularFileError, readFileUpTo } from "../home/read-up-to.js";

const REGULAR = { regularOnly: true } as const;

/**
 * The consent graph file as read from disk. `unreadable` (an I/O failure: a directory, no permission) is
 * apart from `invalid` (read, and it does not validate) so a front end can tell an error from bad input.
 */
export type ConsentGraphFile =
  | { readonly status: "missing"; readonly path: string }
  | {
      readonly status: "unreadable";
      readonly path: string;
      /** Why, without the path: `not a file`, or the error code (`EACCES`, `EISDIR`, …). */
      readonly reason: string;
      /** The same as an issue, code `graph_unreadable`, naming the path. */
      readonly issue: Issue;
    }
  | { readonly status: "invalid"; readonly path: string; readonly issues: readonly Issue[]; readonly text?: string }
  | { readonly status: "ok"; readonly path: string; readonly graph: ConsentGraph; readonly text: string };

function unreadable(path: string, reason: string): Extract<ConsentGraphFile, { status: "unreadable" }> {
  const message = `cannot read consent graph \`${path}\`: ${reason}`;
  return { status: "unreadable", path, reason, issue: { code: "graph_unreadable", path: [], message } };
}

/** Whether anything is at `path`, a symbolic link to nothing included (which `existsSync` calls absent). */
export function consentGraphFileExists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Reads graph text without parsing it: missing and unreadable files come back as such; an oversized one
 * (refused before reading) is invalid.
 */
export function readConsentGraphText(
  path: string,
): { readonly status: "ok"; readonly text: string } | Exclude<ConsentGraphFile, { status: "ok" }> {
  try {
    const stat = statSync(path);
    if (!stat.isFile()) return unreadable(path, "not a file");
    // read with the same bound the size check uses, on the file opened (not a pipe swapped in, not a file
    // grown since the stat): at most one byte more than the limit is ever read
    const bytes = stat.size > MAX_GRAPH_LENGTH * 4 ? undefined : readFileUpTo(path, MAX_GRAPH_LENGTH * 4, REGULAR);
    if (bytes === undefined) {
      const size = stat.size > MAX_GRAPH_LENGTH * 4 ? `${stat.size}` : `more than ${MAX_GRAPH_LENGTH * 4}`;
      const message = `graph too large: ${size} bytes (limit ${MAX_GRAPH_LENGTH} characters)`;
      return { status: "invalid", path, issues: [{ code: "graph_too_large", path: [], message }] };
    }
    return { status: "ok", text: bytes.toString("utf8") };
  } catch (err) {
    if (err instanceof NotRegularFileError) return unreadable(path, "not a file");
    const code = typeof err === "object" && err !== null ? (err as { code?: unknown }).code : undefined;
    if (code === "ENOENT") {
      // a link to nothing (a volume not mounted) is a graph that cannot be read, not a home without one
      if (consentGraphFileExists(path)) return unreadable(path, "a symbolic link to a file that is not there");
      return { status: "missing", path };
    }
    return unreadable(path, typeof code === "string" ? code : err instanceof Error ? err.message : String(err));
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

import { readFile, stat } from "node:fs/promises";
import { formatIssue, type Issue, type Result } from "@acp/core";
import { CliError, EXIT } from "../exit-codes.js";
import { readFailure } from "../decision/read-input.js";
import { parseTraceText, TRACE_LIMITS, type Trace } from "./trace.js";

/** A trace file that did not parse: its name and every problem, each formatted `FILE:LINE: message`. */
export interface TraceFileProblem {
  readonly name: string;
  readonly issues: readonly Issue[];
}

const decoder = new TextDecoder("utf-8", { fatal: true });

/**
 * Reads a trace file and decodes it as strict UTF-8. A missing or unreadable file is a `CliError`
 * (exit 1); a file over the size limit or not UTF-8 is returned as issues (exit 4 at the caller).
 */
export async function readTraceFile(path: string, name: string): Promise<Result<Trace>> {
  let size: number;
  try {
    const info = await stat(path);
    if (!info.isFile()) throw new CliError(`trace \`${name}\` is not a file`, EXIT.error);
    size = info.size;
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw new CliError(`cannot read trace \`${name}\`: ${readFailure(err)}`, EXIT.error);
  }
  if (size > TRACE_LIMITS.maxFileBytes) {
    const message = `the trace is ${size} bytes, more than the ${TRACE_LIMITS.maxFileBytes}-byte limit`;
    return { ok: false, issues: [{ code: "trace_too_large", path: [], message }] };
  }
  let bytes: Uint8Array;
  try {
    bytes = await readFile(path);
  } catch (err) {
    throw new CliError(`cannot read trace \`${name}\`: ${readFailure(err)}`);
  }
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    return { ok: false, issues: [{ code: "invalid_encoding", path: [], message: "the trace is not valid UTF-8" }] };
  }
  return parseTraceText(text, name);
}

/** Formats every problem of every file, one per line, `FILE:LINE: message (help)`. */
export function formatTraceProblems(problems: readonly TraceFileProblem[]): string {
  return problems.flatMap((p) => p.issues.map((issue) => formatIssue(issue, p.name))).join("\n");
}

import { closeSync, constants, existsSync, fstatSync, openSync, readSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Option, type Command } from "commander";
import { MAX_AUDIT_LINE_LENGTH, parseAuditLine, printable } from "@acp/core";
import { homePaths, readAuditFileLinesBackward } from "@acp/store";
import { printError, printLine, resolveHome, resolvePath, type CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";
import { noAuditLogYet } from "./audit-verify.js";

interface TailOptions {
  readonly lines: string;
  readonly follow?: boolean;
  readonly json?: boolean;
}

/**
 * One audit line, readable: time, type, server/tool, decision, rule, agent (the start of the text for a line that is not
 * an event). Control characters are shown as `\uXXXX` escapes: a tool name comes from an upstream server,
 * and an escape sequence in it must not redraw the terminal of whoever reads the audit.
 */
export function formatAuditLine(line: string): string {
  return printable(describeAuditLine(line));
}

function describeAuditLine(line: string): string {
  const parsed = parseAuditLine(line);
  if (!parsed.ok) return `(not an audit event: ${parsed.issues[0]?.message ?? "invalid"}) ${line.slice(0, 120)}`;
  const e = parsed.value;
  // the server too (`files/write_file`): two servers may offer a tool of the same name
  const server = typeof e.metadata["server"] === "string" ? e.metadata["server"] : undefined;
  const tool = e.tool === null ? (server ?? "-") : server !== undefined ? `${server}/${e.tool}` : e.tool;
  const parts = [e.timestamp, e.event_type.padEnd(21), tool, e.decision ?? "-"];
  if (e.policy_rule !== null) parts.push(`rule=${e.policy_rule}`);
  if (e.agent !== null) parts.push(`agent=${e.agent}`);
  if (e.request_id !== null) parts.push(e.request_id);
  if (e.event_type === "checkpoint") {
    const cp = e.metadata["checkpoint"] as { count?: unknown } | undefined;
    parts.push(`count=${String(cp?.count)}`);
  }
  if (e.event_type === "audit_recovered")
    parts.push(`torn bytes kept in ${JSON.stringify(e.metadata["torn_file"] ?? null)}`);
  // a running proxy or service picking up an edited policy file, or keeping the old one (policy.md)
  const hash = (key: string): string => JSON.stringify(e.metadata[key] ?? null).replace(/^"|"$/g, "");
  if (e.event_type === "policy_reloaded")
    parts.push(`policy=${hash("policy_hash")} was=${hash("previous_policy_hash")}`);
  if (e.event_type === "policy_reload_refused")
    parts.push(`kept=${hash("policy_hash")} refused=${hash("refused_policy_hash")}`);
  // the session runtime's own event (suspended, instructions read, …) and what it said, quoted
  if (e.event_type === "session_event")
    parts.push(`${hash("session_event")} session=${hash("session_id")} ${JSON.stringify(e.metadata["message"] ?? "")}`);
  return parts.join("  ");
}

/** Options of {@link followAuditFile}. */
export interface FollowOptions {
  /** Byte offset to start from (the end of what was already printed). */
  readonly from: number;
  /** Stops following; the returned promise then resolves. */
  readonly signal: AbortSignal;
  /** How often the file is polled (default 200 ms). */
  readonly intervalMs?: number;
  /** Most bytes read at once (default 4 MiB, more than the longest line the verifier reads). */
  readonly chunkBytes?: number;
  /** Whether the bytes at `from` continue a line already reported as too long: skipped up to its newline. */
  readonly midLine?: boolean;
}

/** What a line longer than a chunk is handed on as (its bytes are skipped, not held): longer than any line. */
const OVERLONG_LINE = "x".repeat(MAX_AUDIT_LINE_LENGTH + 1);

/** What {@link followAuditFile} rejects with when the log's path holds something other than a regular file. */
export const NOT_A_REGULAR_FILE = "not a regular file (a pipe, a socket or a device)";

/**
 * At most `max` bytes of `path` from `from`, and the file's size (smaller than `from`: it shrank). A file that is
 * not there (yet, or any more) is empty: following waits for it, as `tail -F` does. Anything but a regular file
 * there throws: it is opened without waiting, since a blocking open of a named pipe planted at the log's name
 * waits for a writer for ever, in a call no signal interrupts (Ctrl-C was not heard).
 */
function readRange(path: string, from: number, max: number): { data: Buffer; size: number } {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return { data: Buffer.alloc(0), size: 0 };
    throw err;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new Error(NOT_A_REGULAR_FILE);
    const size = stat.size;
    if (size <= from) return { data: Buffer.alloc(0), size };
    const data = Buffer.alloc(Math.min(size - from, max));
    const read = readSync(fd, data, 0, data.length, from);
    return { data: data.subarray(0, read), size };
  } finally {
    closeSync(fd);
  }
}

/**
 * Polls a log and hands each new complete line to `onLine` until the signal aborts. A partial last
 * line waits for its newline; a file that shrank (replaced or cut) is read again from the start. It reads
 * at most a chunk at a time: a line longer than a chunk is handed on as a stand-in longer than any audit
 * line (which {@link formatAuditLine} shows as too long) and its bytes are skipped, so a log grown by
 * gigabytes at once (a sparse file, a line without end) costs one chunk of memory. Rejects when the path
 * holds something other than a regular file ({@link NOT_A_REGULAR_FILE}) or cannot be read.
 */
export async function followAuditFile(
  path: string,
  onLine: (line: string) => void,
  options: FollowOptions,
): Promise<void> {
  const chunkBytes = Math.max(1, options.chunkBytes ?? 4 * 1024 * 1024);
  let offset = options.from;
  /** Whether the bytes at `offset` are the rest of a line already handed on as too long. */
  let skipping = options.midLine === true;
  while (!options.signal.aborted) {
    const { data, size } = readRange(path, offset, chunkBytes);
    if (size < offset) {
      offset = 0;
      skipping = false;
    }
    let start = 0;
    for (let nl = data.indexOf(0x0a); nl !== -1; nl = data.indexOf(0x0a, start)) {
      if (!skipping) onLine(data.toString("utf8", start, nl));
      skipping = false;
      start = nl + 1;
    }
    if (!skipping && start === 0 && data.length === chunkBytes) {
      onLine(OVERLONG_LINE);
      skipping = true;
    }
    offset += skipping ? data.length : start;
    try {
      // a full chunk: there is more to read now (a turn of the event loop, so Ctrl-C is heard)
      const wait = data.length === chunkBytes ? 0 : (options.intervalMs ?? 200);
      await sleep(wait, undefined, { signal: options.signal });
    } catch {
      return;
    }
  }
}

/**
 * Most bytes of one line `acp audit tail` reads backwards: the longest line the verifier reads (a line
 * longer than that is not an audit event whatever it holds). A longer one stops the reading there.
 */
const MAX_TAIL_LINE_BYTES = 3 * MAX_AUDIT_LINE_LENGTH;

/**
 * The byte after the last newline of the first `size` bytes of `path` (0 when there is none), read backwards;
 * `null` when the bytes after it are more than `maxLineBytes`: a last line longer than any audit line (a
 * hostile one of hundreds of megabytes without a newline), not read through to look for its start.
 */
function endOfLastLine(path: string, size: number, maxLineBytes: number): number | null {
  const fd = openSync(path, "r");
  try {
    const chunk = Buffer.alloc(64 * 1024);
    for (let position = size; position > 0;) {
      if (size - position > maxLineBytes) return null;
      const from = Math.max(0, position - chunk.length);
      const read = readSync(fd, chunk, 0, position - from, from);
      const nl = chunk.subarray(0, read).lastIndexOf(0x0a);
      if (nl !== -1) return size - (from + nl + 1) > maxLineBytes ? null : from + nl + 1;
      position = from;
    }
    return size > maxLineBytes ? null : 0;
  } finally {
    closeSync(fd);
  }
}

/** What {@link readLastAuditLines} found. */
export interface LastAuditLines {
  /** The lines, oldest first. */
  readonly lines: string[];
  /** Where following starts: after the last complete line (after a too long unterminated last line: the file's end). */
  readonly offset: number;
  /**
   * A line longer than the bound that reading backwards stopped in, so no line before it was read: the byte
   * offset just past its last byte, and whether it is the log's last bytes, without a newline yet. `null`: none.
   */
  readonly stoppedAt: { readonly end: number; readonly unterminated: boolean } | null;
}

/**
 * The last `n` complete lines of an audit log and the byte offset after them (where following starts; a
 * partial last line waits for its newline), read backwards in chunks: a log of any size costs one chunk
 * and `n` lines of memory, not the whole file, and reads only those lines (before 28 Nov 2026 it counted the
 * whole log's lines first: a log grown to a terabyte of holes kept it reading for hours). A line longer than
 * `maxLineBytes` (default: the longest the verifier reads) stops the reading ({@link LastAuditLines.stoppedAt}):
 * before 28 Nov 2026 it was read through to its start, a hostile 500 MB line without a newline all of it.
 */
export async function readLastAuditLines(
  path: string,
  n: number,
  maxLineBytes = MAX_TAIL_LINE_BYTES,
): Promise<LastAuditLines> {
  const size = statSync(path).size;
  const offset = endOfLastLine(path, size, maxLineBytes);
  if (offset === null) return { lines: [], offset: size, stoppedAt: { end: size, unterminated: true } };
  // not counted: the lines are not numbered here
  const complete = { lines: Number.MAX_SAFE_INTEGER, size: offset };
  const lines: string[] = [];
  let stoppedAt: LastAuditLines["stoppedAt"] = null;
  if (n > 0) {
    for await (const { text, oversized } of readAuditFileLinesBackward(path, complete, undefined, { maxLineBytes })) {
      if (oversized !== undefined) {
        stoppedAt = { end: oversized.end, unterminated: false };
        break;
      }
      lines.push(text);
      if (lines.length === n) break;
    }
  }
  return { lines: lines.reverse(), offset, stoppedAt };
}

/** What `acp audit tail` says of a line too long to read backwards through (stderr, before the lines after it). */
export function stoppedMessage(file: string, stopped: NonNullable<LastAuditLines["stoppedAt"]>, max: number): string {
  const what = stopped.unterminated
    ? `\`${file}\` ends with more than ${max} bytes without a newline (a line longer than any audit line, or a write under way)`
    : `a line of \`${file}\` ending at byte ${stopped.end} is longer than ${max} bytes (longer than any audit line)`;
  return `${what}: it is not read, nor any line before it (acp audit verify reads the log from its start and names it)`;
}

async function runTail(ctx: CliContext, fileArg: string | undefined, options: TailOptions): Promise<void> {
  const file = fileArg !== undefined ? resolvePath(ctx.io, fileArg) : homePaths(resolveHome(ctx.io)).audit;
  const n = Number(options.lines);
  if (!/^\d+$/.test(options.lines) || !Number.isSafeInteger(n)) {
    throw new CliError(`-n: invalid line count \`${options.lines}\` (a whole number, 0 or more)`, EXIT.usage);
  }
  let last: LastAuditLines;
  try {
    if (!statSync(file).isFile()) throw Object.assign(new Error("not a file"), { code: "EISDIR" });
    last = await readLastAuditLines(file, n);
  } catch (err) {
    const missing = fileArg === undefined && (err as NodeJS.ErrnoException).code === "ENOENT";
    // a new home: `acp audit tail -f` waits for the first event rather than stop before there is one (a home
    // that is not there at all is still an error: nothing would ever write there)
    if (missing && options.follow === true && existsSync(dirname(file))) {
      printError(
        ctx,
        `acp: no audit log yet at \`${file}\`: waiting for the first event (acp proxy and acp serve write it)`,
      );
      last = { lines: [], offset: 0, stoppedAt: null };
    } else if (missing) throw noAuditLogYet(file);
    else {
      const why = (err as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (err as Error).message;
      throw new CliError(`cannot read audit log \`${file}\`: ${why}`, EXIT.error);
    }
  }
  // a line as written holds C1 controls (U+009B opens a CSI), bidi overrides and DEL raw (JCS escapes only
  // U+0000-U+001F): to a terminal they are shown as `\uXXXX` escapes, the same JSON values; piped, the file's bytes
  const raw = (line: string): string => (ctx.io.stdoutIsTTY === true ? printable(line) : line);
  const print = (line: string): void => {
    if (options.json !== true) return printLine(ctx, formatAuditLine(line));
    // a line too long to hold was not read (the readers give the same stand-in): it is not what the file holds
    if (line === OVERLONG_LINE)
      return printError(
        ctx,
        `acp: a line of \`${file}\` longer than ${MAX_AUDIT_LINE_LENGTH} characters is left out (not an audit event: acp audit verify)`,
      );
    printLine(ctx, raw(line));
  };
  const { lines, offset, stoppedAt } = last;
  // older than the lines printed: said first (a hostile line is reported, not read through nor printed)
  if (stoppedAt !== null) printError(ctx, `acp: ${printable(stoppedMessage(file, stoppedAt, MAX_TAIL_LINE_BYTES))}`);
  lines.forEach(print);
  if (options.follow !== true) return;
  const controller = new AbortController();
  // Ctrl-C stops following cleanly; CliIo carries no signals, so this one listens on the process.
  const stop = (): void => controller.abort();
  process.once("SIGINT", stop);
  try {
    // after a too long unterminated last line, its rest (up to its newline) is skipped as it comes
    const midLine = stoppedAt?.unterminated === true;
    await followAuditFile(file, print, { from: offset, signal: controller.signal, midLine });
  } catch (err) {
    // the log replaced by a pipe or a device, or made unreadable, while followed: said as such, exit 1
    throw new CliError(`cannot read audit log \`${file}\`: ${(err as Error).message}`, EXIT.error);
  } finally {
    process.removeListener("SIGINT", stop);
  }
}

/** Registers `acp audit tail [FILE]`. */
export function registerAuditTail(parent: Command, ctx: CliContext): void {
  parent
    .command("tail")
    .description("print the last audit events readably: time, type, server/tool, decision, rule, agent")
    .argument("[file]", "the audit log (default $ACP_HOME/audit.jsonl)")
    .addOption(new Option("-n, --lines <n>", "how many events to print first").default("10", "10"))
    .option("-f, --follow", "keep printing events as they are appended (Ctrl-C stops)")
    .option("--json", "print the raw JSONL lines")
    .addHelpText(
      "after",
      [
        "",
        "Examples:",
        "  acp audit tail                 # the last 10 events",
        "  acp audit tail -n 50 --json    # the last 50 lines as written",
        "  acp audit tail -f              # follow new events",
        "",
        "With -f and no FILE, a home whose log is not there yet waits for its first event (without -f: exit 1).",
        "",
        "--json to a terminal shows control, format and invisible characters (an escape sequence planted in a tool",
        "name or argument) as \\uXXXX escapes, the same JSON values; piped or redirected, the lines are as written.",
        "",
        "Lines are read backwards from the end; a line longer than any audit line (3 MiB) is not read through:",
        "stderr names where it ends, and the lines before it are not printed (acp audit verify reads the log from",
        "its start). A last line that long without a newline is said the same way; -f then starts after it.",
        "",
        "Exit codes: 0 printed (with -f: stopped by Ctrl-C), 1 the log cannot be read (no such file, not a file;",
        "with -f also when it is replaced by a pipe or a device while followed), 2 usage (a bad -n, an unknown",
        "option). Lines that are not audit events are printed as such: still 0.",
      ].join("\n"),
    )
    .action((file: string | undefined, options: TailOptions) => runTail(ctx, file, options));
}

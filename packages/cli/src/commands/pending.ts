import type { Command } from "commander";
import { printableJsonText, timeLeft } from "@acp/core";
import { ownerState, type PendingConsentRow, type PendingCursor } from "@acp/store";
import { TERMINAL_ARGUMENTS, argumentsView, decidedBy, elide, printable, warningsFor } from "@acp/proxy/consent";
import { printLine, type CliContext } from "../context.js";
import type { PendingConsentHandle } from "@acp/server";
import {
  isOrphaned,
  noHomeNote,
  orphanedNote,
  pendingStoreLocation,
  storageUrlOption,
  withPendingStore,
  type StorageFlags,
} from "./pending-store.js";

/** One pending request as `acp pending --json` prints it. */
export interface PendingConsentView {
  readonly id: string;
  readonly server: string;
  readonly tool: string;
  /**
   * The agent that asked, as the terminal prompt, the webhook and Telegram name it (the request's §4.1
   * `agent.name`); null when the request names none (its client did not say, or an older row).
   */
  readonly agent: string | null;
  /** Redacted: secrets show as `[redacted]`. */
  readonly arguments: unknown;
  readonly reasons: unknown;
  readonly category: unknown;
  readonly risk_level: unknown;
  readonly rule: unknown;
  readonly session_id: string | null;
  readonly created_at: string;
  readonly expires_at: string;
}

/** What a §4.1 `agent` field says when nothing is known (`buildConsentRequest`'s placeholder). */
const UNKNOWN_AGENT = "unknown";

/**
 * The name of the agent a stored request says asked: its `agent.name` (`agent.id` when a row has no name).
 * Null for a row without one, and for the placeholder `unknown`: `--json` says null rather than pass a
 * placeholder off as a name a script could match on.
 */
function agentOf(agent: unknown): string | null {
  if (!isRecord(agent)) return null;
  const name = [agent["name"], agent["id"]].find((v): v is string => typeof v === "string" && v !== "");
  return name === undefined || name === UNKNOWN_AGENT ? null : name;
}

function viewOf(row: PendingConsentRow): PendingConsentView {
  const request = (row.request ?? {}) as {
    agent?: unknown;
    action?: Record<string, unknown>;
    policy?: Record<string, unknown>;
  };
  return {
    id: row.id,
    server: row.server,
    tool: row.tool,
    agent: agentOf(request.agent),
    arguments: request.action?.["parameters"] ?? null,
    reasons: Array.isArray(row.reasons) ? row.reasons : [],
    category: request.action?.["category"] ?? null,
    risk_level: request.action?.["risk_level"] ?? null,
    rule: request.policy?.["rule_id"] ?? null,
    session_id: row.sessionId,
    created_at: new Date(row.createdAtMs).toISOString(),
    expires_at: new Date(row.expiresAtMs).toISOString(),
  };
}

/** How often `acp pending --watch` looks at the store. */
export const WATCH_INTERVAL_MS = 500;

/** What `acp pending --watch` tells, as it happens. */
export type PendingWatchEvent =
  | { readonly event: "pending"; readonly request: PendingConsentView }
  | { readonly event: "settled"; readonly id: string; readonly status: string };
// `status` is how the row ended (approved, denied, expired, withdrawn), `orphaned` when its proxy died
// while it waited (the row is still pending; the next proxy to start records it withdrawn), `gone` when
// the row left the table

/**
 * Watches the pending requests until `signal` aborts: every request pending now and every one that
 * arrives is told once (`pending`), and every one told that stops being pending is told again with how it
 * ended (`settled`: approved, denied, expired, withdrawn). Polls the store every `intervalMs`; a store that
 * does not exist yet (no `state.db`) is looked for again. A store that cannot be read rejects.
 */
export async function watchPending(
  ctx: CliContext,
  flags: StorageFlags,
  tell: (event: PendingWatchEvent) => void,
  options: { readonly signal: AbortSignal; readonly intervalMs?: number },
): Promise<void> {
  const shown = new Set<string>();
  const interval = options.intervalMs ?? WATCH_INTERVAL_MS;
  const look = async (store: PendingConsentHandle["store"]): Promise<void> => {
    // the ids alone each look; a request is read whole once, when it is first told (a flood of requests with
    // megabyte arguments is not read again every half second)
    const listed = await store.listPendingIds(ctx.io.now().getTime());
    const orphaned = new Set(listed.filter((r) => ownerState(r.owner) === "gone").map((r) => r.id));
    const current = new Set(listed.filter((r) => !orphaned.has(r.id)).map((r) => r.id));
    for (const id of current) {
      if (shown.has(id)) continue;
      const row = await store.get(id);
      if (row === null || row.status !== "pending" || isOrphaned(row)) continue; // settled since: never told
      shown.add(id);
      tell({ event: "pending", request: viewOf(row) });
    }
    for (const id of [...shown]) {
      if (current.has(id)) continue;
      shown.delete(id);
      if (orphaned.has(id)) {
        tell({ event: "settled", id, status: "orphaned" });
        continue;
      }
      const row = await store.get(id);
      // still `pending` in the table past its expiry: nobody settled it yet, but it can no longer be answered
      const status = row === null ? "gone" : row.status === "pending" ? "expired" : row.status;
      tell({ event: "settled", id, status });
    }
  };
  while (!options.signal.aborted) {
    // one connection for the whole watch; a store that does not exist yet is looked for again
    await withPendingStore(ctx, flags, async (handle) => {
      while (handle !== null && !options.signal.aborted) {
        await look(handle.store);
        await sleep(interval, options.signal);
      }
    });
    await sleep(interval, options.signal);
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

/** Requests `acp pending` reads from the store at a time, and the most bytes of their JSON (beyond the first). */
const PAGE = { limit: 100, maxBytes: 8 * 1024 * 1024 } as const;

/**
 * Hands each request waiting for a person to `each`, a page of the store at a time (a flood of requests with
 * megabyte arguments is never read whole at once), and returns how many, and those whose proxy died while
 * they waited (not waiting any more: their arguments dropped).
 */
async function eachPending(
  ctx: CliContext,
  flags: StorageFlags,
  each: (view: PendingConsentView) => void,
): Promise<{ readonly count: number; readonly orphaned: PendingConsentRow[] }> {
  const now = ctx.io.now().getTime();
  return withPendingStore(ctx, flags, async (handle) => {
    let count = 0;
    const orphaned: PendingConsentRow[] = [];
    let after: PendingCursor | null = null;
    while (handle !== null) {
      const page = await handle.store.listPendingPage(now, { ...PAGE, ...(after !== null ? { after } : {}) });
      for (const row of page.rows) {
        if (isOrphaned(row)) orphaned.push({ ...row, request: null, reasons: null });
        else {
          count++;
          each(viewOf(row));
        }
      }
      if (!page.more || page.last === null) break;
      after = page.last;
    }
    return { count, orphaned };
  });
}

/**
 * Writes `acp pending --json`'s array an element at a time, as `printJson` would write it whole (the same
 * text, byte for byte: two-space indent, escapes to a terminal).
 */
function jsonArrayWriter(ctx: CliContext): { add(view: PendingConsentView): void; end(): void } {
  const write = (text: string): void => {
    ctx.io.stdout.write(ctx.io.stdoutIsTTY === true ? printableJsonText(text) : text);
  };
  let first = true;
  return {
    add(view) {
      write(`${first ? "[\n  " : ",\n  "}${JSON.stringify(view, null, 2).replaceAll("\n", "\n  ")}`);
      first = false;
    },
    end() {
      write(first ? "[]\n" : "\n]\n");
    },
  };
}

/**
 * One request for a person. Tool names come from upstream servers and reasons can quote argument values:
 * every field is shown with its control and invisible characters escaped (`printable`), so none can redraw the
 * terminal or pass for another value, and a warning line says where there were any.
 */
function printView(ctx: CliContext, view: PendingConsentView): void {
  // a long field keeps its start and its end (a tool name padded to hide how it ends shows both)
  const p = (value: unknown): string => elide(printable(value), 200);
  const left = timeLeft(Date.parse(view.expires_at) - ctx.io.now().getTime());
  printLine(ctx, `${p(view.id)}  ${p(view.server)}/${p(view.tool)}  expires ${view.expires_at} (${left})`);
  // the agent names itself (its MCP client's clientInfo): escaped like every other field, and warned of
  printLine(ctx, `  agent: ${view.agent === null ? "unknown" : p(view.agent)}`);
  // a request the session runtime raised names it and its check, not the policy's `default`
  const decider = decidedBy(view.rule, view.reasons);
  const by = decider.rule ? `rule ${decider.text}` : `asked by ${decider.text}`;
  printLine(ctx, `  category ${p(view.category)}, risk ${p(view.risk_level)}, ${by}`);
  // one value a line, a long one cut in its middle (as the terminal prompt shows them): one huge value cannot
  // push a recipient after it out of sight
  const args = isRecord(view.arguments) ? argumentsView(view.arguments, TERMINAL_ARGUMENTS) : null;
  if (args === null) printLine(ctx, `  arguments: ${p(JSON.stringify(view.arguments))}`);
  else for (const line of ["  arguments:", ...args.lines.map((l) => `    ${l}`)]) printLine(ctx, line);
  const reasons = view.reasons as { message?: unknown }[];
  for (const reason of reasons) printLine(ctx, `  - ${p(reason.message)}`);
  const fields = [
    ["server", view.server],
    ["tool", view.tool],
    ["agent", view.agent],
    ["rule", view.rule],
  ] as const;
  const shown = args ?? { hidden: false, shortened: false };
  for (const warning of warningsFor(fields, reasons, shown)) printLine(ctx, `  ! ${warning}`);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Registers `acp pending [--json]`. */
export function registerPending(parent: Command, ctx: CliContext): void {
  const command = parent
    .command("pending")
    .description("list consent requests waiting for a person (answer them with `acp approve` / `acp deny`)")
    .option("--json", "print a JSON array, one object per pending request (with --watch: JSON Lines, one per event)")
    .option("-w, --watch", "keep watching: print each request as it arrives and how each one ends (Ctrl-C stops)");
  storageUrlOption(command)
    .addHelpText(
      "after",
      "\nExamples:\n  acp pending\n  acp pending --json | jq -r '.[].id'\n" +
        "  acp pending --watch            # leave it open in a terminal: new requests show up as they arrive\n" +
        '  acp pending --watch --json     # {"event":"pending","request":{…}} and {"event":"settled","id":…,"status":…} lines\n' +
        "  ACP_STORAGE_URL=postgres://acp:…@db:5432/acp acp pending\n\n" +
        "Reads $ACP_HOME/state.db, or with a storage URL (--storage-url, ACP_STORAGE_URL, storage.url in\n" +
        "config.yml: as acp serve takes it) the PostgreSQL database the nodes share. Each request names the\n" +
        "agent that asked (--json: `agent`, null when the request names none). Secrets in arguments\n" +
        "are shown as [redacted]; arguments one value a line, a long one cut in its middle (--json keeps\n" +
        "them whole); control and invisible characters as \\uXXXX escapes, with a warning line.\n" +
        "A request whose acp proxy is no longer running (killed while it waited) is not\n" +
        "listed: nobody waits for its answer; a line on stderr names it, and the next acp proxy records it withdrawn.\n\nExit codes: 0 listed (also when nothing is pending), 1 the database cannot be read, 2 usage.",
    )
    .action(async (options: StorageFlags & { json?: boolean; watch?: boolean }) => {
      if (options.watch === true) return watch(ctx, options);
      const json = options.json === true ? jsonArrayWriter(ctx) : undefined;
      const { count, orphaned } = await eachPending(ctx, options, (view) =>
        json !== undefined ? json.add(view) : printView(ctx, view),
      );
      json?.end();
      if (orphaned.length > 0) ctx.io.stderr.write(`${printable(orphanedNote(orphaned))}\n`);
      // naming where it looked tells a person whose MCP client set another ACP_HOME why they see nothing
      if (json === undefined && count === 0) {
        const noHome = noHomeNote(ctx, options);
        const where = noHome === undefined ? ` in ${pendingStoreLocation(ctx, options)}` : `: ${noHome}`;
        return printLine(ctx, `no pending consent requests${where}`);
      }
    });
}

/** `acp pending --watch`: until Ctrl-C (or SIGTERM). */
async function watch(ctx: CliContext, options: StorageFlags & { json?: boolean }): Promise<void> {
  const controller = new AbortController();
  // CliIo carries no signals, so this one listens on the process (as `acp audit tail -f` does)
  const stop = (): void => controller.abort();
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  if (options.json !== true)
    ctx.io.stderr.write(`watching for consent requests in ${pendingStoreLocation(ctx, options)} (Ctrl-C stops)\n`);
  try {
    await watchPending(ctx, options, (event) => tellWatch(ctx, event, options.json === true), {
      signal: controller.signal,
    });
  } finally {
    process.removeListener("SIGINT", stop);
    process.removeListener("SIGTERM", stop);
  }
}

/**
 * Prints one event of `acp pending --watch`: a JSON line with `--json` (to a terminal, its C1 controls, bidi
 * overrides and invisible characters as `\uXXXX` escapes, the same JSON value, as `printJson` does; piped, as
 * written), else the request as `acp pending` shows it, or its id and how it ended.
 */
export function tellWatch(ctx: CliContext, event: PendingWatchEvent, json: boolean): void {
  if (json) {
    const line = JSON.stringify(event);
    return printLine(ctx, ctx.io.stdoutIsTTY === true ? printable(line) : line);
  }
  if (event.event === "pending") return printView(ctx, event.request);
  const status =
    event.status === "gone"
      ? "no longer in the table"
      : event.status === "orphaned"
        ? "orphaned: its acp proxy is no longer running"
        : event.status;
  printLine(ctx, `${printable(event.id)}  ${status}`);
}

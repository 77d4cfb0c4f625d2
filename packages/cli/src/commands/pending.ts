import type { Command } from "commander";
import type { PendingConsentRow } from "@acp/store";
import { printable } from "@acp/proxy";
import { printJson, printLine, type CliContext } from "../context.js";
import { storageUrlOption, withPendingStore, type StorageFlags } from "./pending-store.js";

/** One pending request as `acp pending --json` prints it. */
export interface PendingConsentView {
  readonly id: string;
  readonly server: string;
  readonly tool: string;
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

function viewOf(row: PendingConsentRow): PendingConsentView {
  const request = (row.request ?? {}) as { action?: Record<string, unknown>; policy?: Record<string, unknown> };
  return {
    id: row.id,
    server: row.server,
    tool: row.tool,
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

function listPending(ctx: CliContext, flags: StorageFlags): Promise<PendingConsentView[]> {
  return withPendingStore(ctx, flags, async (handle) =>
    handle === null ? [] : (await handle.store.listPending(ctx.io.now().getTime())).map(viewOf),
  );
}

/**
 * One request for a person. Tool names come from upstream servers and reasons can quote argument values:
 * every field is shown with its control characters escaped (`printable`), so none can redraw the terminal.
 */
function printView(ctx: CliContext, view: PendingConsentView): void {
  const p = printable;
  printLine(ctx, `${p(view.id)}  ${p(view.server)}/${p(view.tool)}  expires ${view.expires_at}`);
  printLine(ctx, `  category ${p(view.category)}, risk ${p(view.risk_level)}, rule ${p(view.rule)}`);
  printLine(ctx, `  arguments: ${p(JSON.stringify(view.arguments))}`);
  for (const reason of view.reasons as { message?: unknown }[]) printLine(ctx, `  - ${p(reason.message)}`);
}

/** Registers `acp pending [--json]`. */
export function registerPending(parent: Command, ctx: CliContext): void {
  const command = parent
    .command("pending")
    .description("list consent requests waiting for a person (answer them with `acp approve` / `acp deny`)")
    .option("--json", "print a JSON array, one object per pending request");
  storageUrlOption(command)
    .addHelpText(
      "after",
      "\nExamples:\n  acp pending\n  acp pending --json | jq -r '.[].id'\n" +
        "  ACP_STORAGE_URL=postgres://acp:…@db:5432/acp acp pending\n\n" +
        "Reads $ACP_HOME/state.db, or with a storage URL (--storage-url, ACP_STORAGE_URL, storage.url in\n" +
        "config.yml: as acp serve takes it) the PostgreSQL database the nodes share. Secrets in arguments\n" +
        "are shown as [redacted].\n\nExit codes: 0 listed (also when nothing is pending), 1 the database cannot be read.",
    )
    .action(async (options: StorageFlags & { json?: boolean }) => {
      const views = await listPending(ctx, options);
      if (options.json === true) return printJson(ctx, views);
      if (views.length === 0) return printLine(ctx, "no pending consent requests");
      for (const view of views) printView(ctx, view);
    });
}

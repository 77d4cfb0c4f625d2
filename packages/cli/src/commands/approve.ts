import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { answerPendingConsent, parseApprovalDuration, type ApprovalScope, type CliAnswerInput } from "@acp/proxy";
import { createPendingConsentStore, openPendingConsentDb } from "@acp/store";
import { printJson, printLine, resolveHome, type CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";

const REQUEST_ID = /^cr_[0-9a-f]{32}$/;

/** Refuses an id that is not `cr_` + 32 hex digits (exit 4). */
export function assertRequestId(id: string): void {
  if (!REQUEST_ID.test(id)) {
    throw new CliError(
      `invalid consent request id \`${id.slice(0, 80)}\` (expected cr_ and 32 hex digits, see \`acp pending\`)`,
      EXIT.invalid,
    );
  }
}

/**
 * Records an answer in `$ACP_HOME/state.db`, once. Unknown id → exit 4; expired or already decided → exit 3.
 * Shared by `acp approve` and `acp deny`.
 */
export function recordCliAnswer(ctx: CliContext, input: Omit<CliAnswerInput, "approverId">): void {
  const path = join(resolveHome(ctx.io), "state.db");
  if (!existsSync(path)) throw new CliError(`no pending consent request \`${input.id}\` (no ${path})`, EXIT.invalid);
  const db = openPendingConsentDb(path);
  try {
    const approverId = `cli:${ctx.io.env["USER"] ?? ctx.io.env["LOGNAME"] ?? "unknown"}`;
    const result = answerPendingConsent(createPendingConsentStore(db), { ...input, approverId }, ctx.io.now());
    if (result.ok) return;
    if (result.code === "consent_request_unknown") {
      throw new CliError(`no pending consent request \`${input.id}\``, EXIT.invalid);
    }
    if (result.code === "consent_request_expired") {
      throw new CliError(`consent request \`${input.id}\` has expired; the call was denied`, EXIT.refused);
    }
    throw new CliError(`consent request \`${input.id}\` was already ${result.status ?? "decided"}`, EXIT.refused);
  } finally {
    db.close();
  }
}

function scopeOf(ctx: CliContext, options: { session?: boolean; for?: string }): ApprovalScope {
  if (options.session === true && options.for !== undefined) {
    throw new CliError("choose one of --session and --for", EXIT.usage);
  }
  if (options.session === true) return "session";
  if (options.for === undefined) return "once";
  const ms = parseApprovalDuration(options.for);
  if (ms === null) {
    throw new CliError(
      `invalid duration \`${options.for}\` (expected e.g. 90s, 10m, 2h, 1d; at most 7d)`,
      EXIT.invalid,
    );
  }
  return { until: new Date(ctx.io.now().getTime() + ms).toISOString() };
}

function modificationsOf(text: string | undefined): Record<string, unknown> | undefined {
  if (text === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new CliError(`--modify: invalid JSON: ${(error as Error).message}`, EXIT.invalid);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed) || Object.keys(parsed).length === 0) {
    throw new CliError("--modify: expected a non-empty JSON object of arguments to change", EXIT.invalid);
  }
  return parsed as Record<string, unknown>;
}

/** Registers `acp approve ID [--session | --for 10m] [--modify JSON]`. */
export function registerApprove(parent: Command, ctx: CliContext): void {
  parent
    .command("approve")
    .description("approve a pending consent request from any terminal (see `acp pending`)")
    .argument("<id>", "the consent request id (cr_…)")
    .option("--session", "also approve the same tool with the same arguments for the rest of this agent session")
    .option("--for <duration>", "also approve the same tool with the same arguments for a while (90s, 10m, 2h, 1d)")
    .option("--modify <json>", "approve with these arguments changed (a JSON object of top-level keys)")
    .option("--json", "print the result as JSON")
    .addHelpText(
      "after",
      "\nExamples:\n  acp approve cr_3f2a…\n  acp approve cr_3f2a… --session\n  acp approve cr_3f2a… --for 10m\n" +
        `  acp approve cr_3f2a… --modify '{"path":"/tmp/safe.txt"}'\n\n` +
        "Exit codes: 0 recorded, 2 usage, 3 expired or already decided, 4 unknown id or invalid input.",
    )
    .action((id: string, options: { session?: boolean; for?: string; modify?: string; json?: boolean }) => {
      assertRequestId(id);
      const scope = scopeOf(ctx, options);
      const modifications = modificationsOf(options.modify);
      recordCliAnswer(ctx, { id, decision: "approved", scope, ...(modifications ? { modifications } : {}) });
      const label = typeof scope === "string" ? scope : `until ${scope.until}`;
      if (options.json === true)
        printJson(ctx, { id, decision: "approved", scope, modifications: modifications ?? null });
      else printLine(ctx, `approved ${id} (scope: ${label}${modifications ? ", arguments modified" : ""})`);
    });
}

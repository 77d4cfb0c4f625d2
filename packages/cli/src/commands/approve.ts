import type { Command } from "commander";
import { parseApprovalDuration, type ApprovalScope } from "@acp/proxy/consent";
import { answerConsent, HttpError, type ConsentAnswerInput } from "@acp/server/state";
import { printJson, printLine, type CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";
import { cliActor } from "../wiring/cli-actor.js";
import { oldNameOption, renamedValue } from "./renamed-option.js";
import { isOrphaned, orphanedRefusal, storageUrlOption, withPendingStore, type StorageFlags } from "./pending-store.js";

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

/** What `acp approve` / `acp deny` answer. */
export interface CliAnswer {
  readonly id: string;
  readonly decision: "approved" | "denied";
  readonly scope?: ApprovalScope;
  readonly modifications?: Record<string, unknown>;
  readonly reason?: string;
}

/**
 * Records an answer, once, in the pending-consent table `acp serve` and the proxy wait on (`state.db`, or
 * PostgreSQL: the update notifies the waiting node, which signs, verifies and audits it as it does an
 * answer from the console). The same code as `POST /v1/consent/{id}/response` with the approver
 * `cli:$USER`. Unknown id → exit 4; expired, already decided, or its proxy no longer running (nobody would
 * read the answer) → exit 3; nothing changes then.
 */
export async function recordCliAnswer(ctx: CliContext, flags: StorageFlags, answer: CliAnswer): Promise<void> {
  const approverId = cliActor(ctx.io.env);
  const input: ConsentAnswerInput = {
    decision:
      answer.decision === "denied" ? "denied" : answer.modifications ? "approved_with_modifications" : "approved",
    ...(answer.scope !== undefined ? { scope: answer.scope } : {}),
    ...(answer.modifications !== undefined ? { modifications: answer.modifications } : {}),
    ...(answer.reason !== undefined ? { reason: answer.reason } : {}),
  };
  try {
    await withPendingStore(ctx, flags, async (handle) => {
      if (handle === null) throw new HttpError(404, "consent_request_unknown", "no pending-consent table");
      // an answer to a proxy that died while it waited would be read by nobody
      const row = await handle.store.get(answer.id);
      if (row !== null && isOrphaned(row)) throw new CliError(orphanedRefusal(row), EXIT.refused);
      await answerConsent(handle.store, answer.id, input, approverId, ctx.io.now());
    });
  } catch (err) {
    if (!(err instanceof HttpError)) throw err;
    if (err.code === "consent_request_unknown") {
      throw new CliError(`no pending consent request \`${answer.id}\` (see \`acp pending\`)`, EXIT.invalid);
    }
    throw new CliError(err.message, err.status === 400 ? EXIT.invalid : EXIT.refused);
  }
}

interface ScopeFlags {
  forSession?: boolean;
  /** The deprecated name of --for-session. */
  session?: boolean;
  for?: string;
}

function scopeOf(ctx: CliContext, options: ScopeFlags): ApprovalScope {
  const names = { old: "--session", current: "--for-session" };
  const forSession = renamedValue(ctx, names, options.session, options.forSession) === true;
  if (forSession && options.for !== undefined) {
    throw new CliError("choose one of --for-session and --for", EXIT.usage);
  }
  if (forSession) return "session";
  if (options.for === undefined) return "once";
  const ms = parseApprovalDuration(options.for);
  if (ms === null) {
    throw new CliError(
      `--for: invalid duration \`${options.for}\` (expected e.g. 90s, 10m, 2h, 1d; at most 7d)`,
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

/** Registers `acp approve ID [--for-session | --for 10m] [--modify JSON]`. */
export function registerApprove(parent: Command, ctx: CliContext): void {
  const command = parent
    .command("approve")
    .description("approve a pending consent request from any terminal (see `acp pending`)")
    .argument("<id>", "the consent request id (cr_…)")
    .option("--for-session", "also approve the same tool with the same arguments for the rest of this agent session")
    .addOption(oldNameOption("--session"))
    .option(
      "--for <duration>",
      "also approve the same tool with the same arguments for a while (90s, 10m, 2h, at most 7d), in every " +
        "session of every acp proxy of this home (kept in state.db: a restarted stdio client is covered too)",
    )
    .option("--modify <json>", "approve with these arguments changed (a JSON object of top-level keys)")
    .option("--json", "print the result as JSON");
  storageUrlOption(command)
    .addHelpText(
      "after",
      "\nExamples:\n  acp approve cr_3f2a…\n  acp approve cr_3f2a… --for-session\n  acp approve cr_3f2a… --for 10m\n" +
        `  acp approve cr_3f2a… --modify '{"path":"/tmp/safe.txt"}'\n` +
        "  ACP_STORAGE_URL=postgres://acp:…@db:5432/acp acp approve cr_3f2a…\n\n" +
        "The answer goes to $ACP_HOME/state.db, or with a storage URL (as acp serve takes it) to PostgreSQL,\n" +
        "where it reaches the waiting node at once (LISTEN/NOTIFY); that node signs, verifies and audits it.\n\n" +
        "Exit codes: 0 recorded, 1 the database cannot be reached, 2 usage, 3 expired or already decided, or\n" +
        "its acp proxy is no longer running (killed while it waited: nobody would read the answer),\n" +
        "4 unknown id or invalid input.",
    )
    .action(async (id: string, options: StorageFlags & ScopeFlags & { modify?: string; json?: boolean }) => {
      assertRequestId(id);
      const scope = scopeOf(ctx, options);
      const modifications = modificationsOf(options.modify);
      await recordCliAnswer(ctx, options, {
        id,
        decision: "approved",
        scope,
        ...(modifications ? { modifications } : {}),
      });
      const label = typeof scope === "string" ? scope : `until ${scope.until}`;
      if (options.json === true)
        printJson(ctx, { id, decision: "approved", scope, modifications: modifications ?? null });
      else printLine(ctx, `approved ${id} (scope: ${label}${modifications ? ", arguments modified" : ""})`);
    });
}

import type { Command } from "commander";
import { printJson, printLine, type CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";
import { assertRequestId, recordCliAnswer } from "./approve.js";
import { storageUrlOption, type StorageFlags } from "./pending-store.js";

/** Registers `acp deny ID [--reason TEXT]`. */
export function registerDeny(parent: Command, ctx: CliContext): void {
  const command = parent
    .command("deny")
    .description("deny a pending consent request from any terminal (see `acp pending`)")
    .argument("<id>", "the consent request id (cr_…)")
    .option("--reason <text>", "why; the agent sees it in the tool error")
    .option("--json", "print the result as JSON");
  storageUrlOption(command)
    .addHelpText(
      "after",
      "\nExamples:\n  acp deny cr_3f2a…\n  acp deny cr_3f2a… --reason 'wrong recipient'\n" +
        "  ACP_STORAGE_URL=postgres://acp:…@db:5432/acp acp deny cr_3f2a…\n\n" +
        "The answer goes to $ACP_HOME/state.db, or with a storage URL (as acp serve takes it) to PostgreSQL,\n" +
        "where it reaches the waiting node at once (LISTEN/NOTIFY); that node signs, verifies and audits it.\n\n" +
        "Exit codes: 0 recorded, 1 the database cannot be reached, 2 usage, 3 expired or already decided, or\n" +
        "its acp proxy is no longer running (killed while it waited: nobody would read the answer),\n" +
        "4 unknown id or invalid input.",
    )
    .action(async (id: string, options: StorageFlags & { reason?: string; json?: boolean }) => {
      assertRequestId(id);
      if (options.reason !== undefined && options.reason.length > 500) {
        throw new CliError("--reason: at most 500 characters", EXIT.invalid);
      }
      await recordCliAnswer(ctx, options, {
        id,
        decision: "denied",
        ...(options.reason !== undefined ? { reason: options.reason } : {}),
      });
      if (options.json === true) printJson(ctx, { id, decision: "denied", reason: options.reason ?? null });
      else printLine(ctx, `denied ${id}`);
    });
}

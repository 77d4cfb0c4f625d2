import type { Command } from "commander";
import { handleOf, ReputationPolicy, takeDown } from "@acp/claim";
import { printJson, printLine, resolveHome, type CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";
import { loadClaimConfig } from "./claim-config.js";
import { withClaimStore } from "./claim-store-open.js";

interface TakedownFlags {
  db?: string;
  storageUrl?: string;
  config?: string;
  json?: boolean;
}

/** Registers `acp claim takedown`: the operator's rapid takedown of a published sandbox (§23.2). */
export function registerClaimTakedown(claim: Command, ctx: CliContext): void {
  claim
    .command("takedown <published-url-or-handle>")
    .description("as the operator: take a published sandbox down at once and charge its creator's reputation")
    .option("--db <file>", "SQLite state database of the provider (default $ACP_HOME/state.db)")
    .option("--storage-url <url>", "PostgreSQL of the provider (default ACP_STORAGE_URL or storage.url in config.yml)")
    .option("--config <file>", "claim config, for the reputation settings (default $ACP_HOME/claim/config.yml)")
    .option("--json", "print the result as JSON")
    .addHelpText(
      "after",
      "\nExample:\n  acp claim takedown https://k3…q.faq.example.net/acme-help   # the page answers 404 from now on\n\nRun it with the provider's $ACP_HOME (its provider.key finds the handle). The running provider needs no restart.\nIt creates nothing: without the provider's state or provider.key it stops (exit 1) naming what is missing.\nIt writes, so it first applies the claim migrations as acp claim serve does (a database an older provider made\nis migrated).\n\nExit codes: 0 taken down, 1 no provider state or provider.key (named), or the claim config or the database\ncannot be read, 2 usage (neither a published URL nor a handle, --db with a PostgreSQL URL), 3 nothing taken\ndown (no published sandbox behind the handle, or it is a claimed workspace), 4 an invalid claim config or\nprovider key.\n",
    )
    .action(async (target: string, flags: TakedownFlags) => {
      const handle = handleOf(target);
      if (handle === undefined)
        throw new CliError(
          `\`${target}\` is neither a published URL nor a handle (26 characters a–z, 2–7)`,
          EXIT.usage,
        );
      const home = resolveHome(ctx.io);
      const policy = loadClaimConfig(ctx, home, flags);
      const rep = new ReputationPolicy(policy.reputation);
      const charge =
        policy.mode === "pow" ? undefined : { points: rep.pointsFor("content_flagged"), halfLifeMs: rep.halfLifeMs };
      const r = await withClaimStore(ctx, home, flags, { key: "provider", access: "write" }, (store) =>
        takeDown(store, handle, ctx.io.now().getTime(), charge),
      );
      if (!r.ok)
        throw new CliError(
          r.reason === "claimed"
            ? "that handle is a claimed workspace, not a sandbox: nothing taken down"
            : "no published sandbox behind that handle (already gone, expired, or another provider key)",
          EXIT.refused,
        );
      if (flags.json === true)
        printJson(ctx, { sandbox_id: r.sandboxId, state: "deleted", reputation_charged: charge !== undefined });
      else printLine(ctx, `taken down: sandbox ${r.sandboxId} is deleted; its handle is tombstoned`);
    });
}

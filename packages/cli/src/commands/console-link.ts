import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { createSqliteConsoleAuthStore, LINK_TTL_MS, readServeState } from "@acp/server";
import { openStateDb } from "@acp/store";
import { printJson, printLine, resolveHome, type CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";

/** Registers `acp console-link`: a fresh one-time sign-in link for the running `acp serve`. */
export function registerConsoleLink(parent: Command, ctx: CliContext): void {
  parent
    .command("console-link")
    .description("print a fresh one-time sign-in link to the web console of the running `acp serve`")
    .option("--json", "print { url, expires_at } as JSON")
    .addHelpText(
      "after",
      `
The link signs one browser in (one use, valid 15 minutes). It is written to $ACP_HOME/state.db, where the
running service reads it; the service's address comes from $ACP_HOME/serve.json.

Examples:
  acp console-link
  ACP_HOME=/srv/acp acp console-link --json

Exit codes: 0 printed, 1 no running service found in $ACP_HOME.`,
    )
    .action((options: { json?: boolean }) => {
      const home = resolveHome(ctx.io);
      const state = readServeState(home);
      const dbPath = join(home, "state.db");
      if (state === null || !existsSync(dbPath)) {
        throw new CliError(
          `no running \`acp serve\` found in \`${home}\` (no serve.json): start one first`,
          EXIT.error,
        );
      }
      const db = openStateDb(dbPath);
      try {
        const now = ctx.io.now().getTime();
        const token = createSqliteConsoleAuthStore(db).createLink(now, LINK_TTL_MS);
        const url = `${state.url}/console/login?token=${token}`;
        if (options.json === true) printJson(ctx, { url, expires_at: new Date(now + LINK_TTL_MS).toISOString() });
        else printLine(ctx, url);
      } finally {
        db.close();
      }
    });
}

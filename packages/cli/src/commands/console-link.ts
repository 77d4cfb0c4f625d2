import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import {
  explainStorageError,
  LINK_TTL_MS,
  openConsoleAuth,
  readServeState,
  type ConsoleAuthHandle,
} from "@acp/server/state";
import { printJson, printLine, resolveHome, type CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";
import { consoleApproverOf } from "../wiring/console-approver.js";
import { storageOf } from "./storage-url.js";

/** Whether a process with this id runs on this machine (EPERM: it runs, as another user). */
function isRunning(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Registers `acp console-link`: a fresh one-time sign-in link for the running `acp serve`. */
export function registerConsoleLink(parent: Command, ctx: CliContext): void {
  parent
    .command("console-link")
    .description("print a fresh one-time sign-in link to the web console of the running `acp serve`")
    .option("--storage-url <url>", "the PostgreSQL URL the service runs on (default ACP_STORAGE_URL, storage.url)")
    .option(
      "--as <name>",
      "who signs in with the link: the audit names them (console:NAME) as the approver of every answer " +
        "given in that session (default $USER; 1-64 letters, digits, . _ - @)",
    )
    .option("--json", "print { url, expires_at, approver } as JSON")
    .addHelpText(
      "after",
      `
The link signs one browser in (one use, valid 15 minutes). It is written where the running service keeps
its console sessions: $ACP_HOME/state.db, or the PostgreSQL database of --storage-url / ACP_STORAGE_URL /
storage.url in config.yml (same precedence as acp serve; on PostgreSQL the link works on every node). The
service's address comes from $ACP_HOME/serve.json: its public URL when it was started with --public-url
(or serve.public_url), else where it listens.

The link names who signs in with it: --as NAME, else $USER (or $LOGNAME, or the account running the
command). Every answer given in that console session is recorded as approver console:NAME (in the signed
consent response and the audit event), and the pages say "signed in as NAME". Give each person their own
link. A name has 1 to 64 letters, digits, ".", "_", "-" or "@", starting with a letter or digit.

Examples:
  acp console-link
  acp console-link --as alice
  ACP_HOME=/srv/acp acp console-link --json
  ACP_STORAGE_URL=postgres://acp:…@db:5432/acp acp console-link

Exit codes: 0 printed, 1 no running service found in $ACP_HOME (no serve.json, or its process is gone) or
its storage cannot be opened, 2 an invalid --as name (or no --as and $USER is not a valid name).`,
    )
    .action(async (options: { json?: boolean; storageUrl?: string; as?: string }) => {
      const approver = consoleApproverOf("--as", options.as, ctx.io.env);
      if (!("name" in approver)) throw new CliError(approver.unusableDefault, EXIT.usage);
      const home = resolveHome(ctx.io);
      const state = readServeState(home);
      const dbPath = join(home, "state.db");
      const storage = storageOf(ctx, options, home);
      if (state !== null && !isRunning(state.pid)) {
        throw new CliError(
          `the \`acp serve\` recorded in \`${join(home, "serve.json")}\` (pid ${state.pid}, started ${state.started_at}) ` +
            "is not running (it was killed before it could clean up): start it again with `acp serve`",
          EXIT.error,
        );
      }
      if (state?.storage === "postgres" && storage === null) {
        throw new CliError(
          "the running `acp serve` keeps its state in PostgreSQL: pass --storage-url or set ACP_STORAGE_URL",
          EXIT.error,
        );
      }
      if (state === null || (storage === null && !existsSync(dbPath))) {
        throw new CliError(
          `no running \`acp serve\` found in \`${home}\` (no serve.json): start it with \`acp serve\` (it prints a first sign-in link itself), then run this for more`,
          EXIT.error,
        );
      }
      let auth: ConsoleAuthHandle;
      try {
        auth = await openConsoleAuth({ statePath: dbPath, ...(storage !== null ? { storageUrl: storage.url } : {}) });
      } catch (err) {
        if (storage === null) throw err;
        throw new CliError(explainStorageError(err, storage), EXIT.error);
      }
      try {
        const now = ctx.io.now().getTime();
        const token = await auth.store.createLink(now, LINK_TTL_MS, approver.name);
        // behind a reverse proxy the link is made with the public URL the service was given
        const url = `${state.public_url ?? state.url}/console/login?token=${token}`;
        if (options.json === true) {
          printJson(ctx, { url, expires_at: new Date(now + LINK_TTL_MS).toISOString(), approver: approver.name });
        } else printLine(ctx, url);
      } finally {
        await auth.close();
      }
    });
}

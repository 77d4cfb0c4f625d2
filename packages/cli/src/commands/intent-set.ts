import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { ed25519KeyPairFromSeed, formatIssue } from "@acp/core";
import { createLiveSessionStore, openStateDb, type LiveSessionRow, type LiveSessionStore } from "@acp/store";
import { printJson, printLine, resolveHome, resolvePath, type CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";
import { readInputFile } from "../decision/read-input.js";
import { readIntentText, MAX_INTENT_FILE_BYTES } from "../intent/intent-file.js";
import { signIntentUpdate } from "../wiring/intent-update.js";
import { cliActor } from "../wiring/cli-actor.js";
import { openMasterSeed } from "../home-access/master-key.js";
import { oldNameOption, renamedValue } from "./renamed-option.js";

interface IntentSetOptions {
  sessionId?: string;
  /** The deprecated name of --session-id. */
  session?: string;
  wait?: string;
  list?: boolean;
  all?: boolean;
  json?: boolean;
}

const SESSION_ID = /^[A-Za-z0-9._:-]{1,128}$/;

function withStore<T>(ctx: CliContext, what: (store: LiveSessionStore) => T): T | undefined {
  const path = join(resolveHome(ctx.io), "state.db");
  if (!existsSync(path)) return undefined;
  const db = openStateDb(path);
  try {
    return what(createLiveSessionStore(db));
  } finally {
    db.close();
  }
}

/** Whether the proxy that runs a session is still there (same machine; a proxy that died leaves its rows). */
function proxyAlive(row: LiveSessionRow): boolean {
  try {
    process.kill(row.pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

function listSessions(ctx: CliContext, options: IntentSetOptions): void {
  const rows =
    withStore(ctx, (store) =>
      store.list({ all: options.all === true }).map((row) => {
        const last = store.updates(row.id).at(-1);
        const ended = row.status === "closed" || !proxyAlive(row);
        return { row, ended, last };
      }),
    ) ?? [];
  if (options.json === true) {
    printJson(
      ctx,
      rows.map(({ row, ended, last }) => ({
        id: row.id,
        agent: row.agent,
        started_at: new Date(row.startedAtMs).toISOString(),
        status: ended ? "ended" : "live",
        intent_version: row.intentVersion,
        intent_hash: row.intentHash,
        last_update: last === undefined ? null : { seq: last.seq, status: last.status, outcome: last.outcome },
      })),
    );
    return;
  }
  if (rows.length === 0) {
    // a proxy records a session at its first tool call or plan: one that only listed tools is not here yet
    const hint = "(a session of acp proxy or acp run is listed from its first tool call or plan)";
    printLine(ctx, options.all === true ? `no sessions recorded ${hint}` : `no live sessions ${hint}`);
    return;
  }
  for (const { row, ended, last } of rows) {
    const update =
      last === undefined
        ? ""
        : `  update ${last.seq}: ${last.status}${last.outcome !== null ? ` (${last.outcome})` : ""}`;
    printLine(
      ctx,
      `${row.id}  ${ended ? "ended" : "live"}  ${row.agent ?? "-"}  since ${new Date(row.startedAtMs).toISOString()}  intent v${row.intentVersion} ${row.intentHash.slice(0, 19)}…${update}`,
    );
  }
}

async function setIntent(ctx: CliContext, file: string, id: string, options: IntentSetOptions): Promise<void> {
  if (!SESSION_ID.test(id))
    throw new CliError(`invalid session id \`${id.slice(0, 80)}\` (see \`acp intent set --list\`)`, EXIT.invalid);
  const path = resolvePath(ctx.io, file);
  const read = readIntentText(await readInputFile(path, "intent", MAX_INTENT_FILE_BYTES));
  if (!read.ok)
    throw new CliError(`invalid intent:\n${read.issues.map((i) => formatIssue(i, path)).join("\n")}`, EXIT.invalid);
  const home = resolveHome(ctx.io);
  const check = withStore(ctx, (store) => store.get(id));
  if (check === undefined) throw new CliError(`no session \`${id}\` (see \`acp intent set --list\`)`, EXIT.invalid);
  if (check.status !== "live" || !proxyAlive(check))
    throw new CliError(`session \`${id}\` has ended: its intent can no longer change`, EXIT.refused);
  let key;
  try {
    // a person runs this command: ACP_PASSPHRASE, else asked on the terminal (not the proxy's advice about its env)
    key = ed25519KeyPairFromSeed(await openMasterSeed(ctx, home));
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw new CliError(`cannot sign the update: ${message}`, err instanceof CliError ? err.exitCode : EXIT.error);
  }
  const by = cliActor(ctx.io.env);
  const issuedAt = ctx.io.now().toISOString();
  let signed: ReturnType<typeof signIntentUpdate> | undefined;
  const result = withStore(ctx, (store) =>
    store.queueUpdate(id, ctx.io.now().getTime(), (seq, session) => {
      signed = signIntentUpdate(key.privateKey, session, seq, read.intent, { by, issuedAt });
      return signed;
    }),
  );
  if (result === undefined || !result.ok || signed === undefined) {
    if (result?.ok === false && result.code === "session_finished")
      throw new CliError(`session \`${id}\` has ended: its intent can no longer change`, EXIT.refused);
    throw new CliError(`no session \`${id}\` (see \`acp intent set --list\`)`, EXIT.invalid);
  }
  const p = signed.payload;
  const settled = await waitForOutcome(ctx, id, p.seq, options.wait);
  if (settled !== undefined && settled.status !== "applied") {
    throw new CliError(
      `the proxy did not apply update ${p.seq}: ${settled.status}: ${settled.outcome ?? ""}`,
      EXIT.refused,
    );
  }
  const status = settled?.status ?? "pending";
  if (options.json === true) {
    printJson(ctx, {
      session: id,
      seq: p.seq,
      from_version: p.from_version,
      from_hash: p.from_hash,
      to_version: p.from_version + 1,
      intent_hash: p.intent_hash,
      status,
    });
    return;
  }
  if (status === "applied") {
    printLine(
      ctx,
      `session \`${id}\` now runs intent version ${p.from_version + 1} (${p.intent_hash}); tokens of version ${p.from_version} are revoked`,
    );
    return;
  }
  printLine(
    ctx,
    `queued update ${p.seq} for session \`${id}\`: intent version ${p.from_version + 1} (${p.intent_hash}) replaces version ${p.from_version}; it applies before the session's next call and revokes every token issued under the old version`,
  );
}

/** Polls `state.db` until the proxy settled update `seq` or `wait` seconds passed; undefined: still pending. */
async function waitForOutcome(
  ctx: CliContext,
  id: string,
  seq: number,
  wait: string | undefined,
): Promise<{ status: string; outcome: string | null } | undefined> {
  if (wait === undefined) return undefined;
  const seconds = Number(wait);
  if (!Number.isFinite(seconds) || seconds < 0 || seconds > 3600)
    throw new CliError(`--wait: \`${wait}\` is not a number of seconds (0 to 3600)`, EXIT.usage);
  const until = Date.now() + seconds * 1000;
  for (;;) {
    const row = withStore(ctx, (store) => store.updates(id).find((u) => u.seq === seq));
    if (row !== undefined && row.status !== "pending") return { status: row.status, outcome: row.outcome };
    if (Date.now() >= until) return undefined;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Registers `acp intent set`: a person (never the agent) changes the intent of a live session. */
export function registerIntentSet(parent: Command, ctx: CliContext): void {
  parent
    .command("set")
    .description("change the intent of a live proxy session (signed with your home key), or list live sessions")
    .argument("[file]", "the new intent (YAML or JSON), checked before anything changes")
    .option("-s, --session-id <id>", "the live session to change (see --list)")
    .addOption(oldNameOption("--session <id>"))
    .option("-l, --list", "list the live sessions of every proxy using this home, with their intent and last update")
    .option("--all", "with --list: also sessions that have ended")
    .option("--wait <seconds>", "wait until the proxy applied the update (it does so at the session's next call)")
    .option("--json", "print the result as JSON")
    .addHelpText(
      "after",
      `
Examples:
  acp intent set --list
  acp intent set --session-id stdio_3f9a… ~/.acp/intents/triage.yml
  acp intent set --list --json

The update is signed with the home's key (unlocked with ACP_PASSPHRASE, else asked on the terminal) and
written to $ACP_HOME/state.db.
The proxy running the session checks for updates before each call, verifies the signature, and applies
the new intent as the next version: the old plan is void and every authority token of the old version is
revoked. The signed update is your confirmation; the agent cannot reach this command or the home.

Exit codes: 0 queued, applied (with --wait) or listed, 1 the key cannot be unlocked, 2 usage, 3 the
session has ended or the proxy refused the update, 4 invalid intent or unknown session.
Guide: acp docs guides/intents`,
    )
    .action(async (file: string | undefined, options: IntentSetOptions) => {
      const names = { old: "--session", current: "--session-id" };
      const id = renamedValue(ctx, names, options.session, options.sessionId);
      if (options.list === true) {
        if (file !== undefined || id !== undefined)
          throw new CliError("--list takes no file and no --session-id", EXIT.usage);
        listSessions(ctx, options);
        return;
      }
      if (options.all === true) throw new CliError("--all goes with --list", EXIT.usage);
      if (id === undefined) throw new CliError("name the session with --session-id ID (see --list)", EXIT.usage);
      if (file === undefined) throw new CliError("name the new intent file", EXIT.usage);
      await setIntent(ctx, file, id, options);
    });
}

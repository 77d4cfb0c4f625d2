import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { checkHomePermissions, isExistingHome, type HomeCheck } from "@acp/store";
import { printJson, printLine, resolveHome, resolvePath, type CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";
import { checkIsolation } from "../doctor/isolation.js";
import { checkKeys, checkPolicy, checkVault } from "../doctor/home-checks.js";
import type { PathIo } from "../wiring/policy-path.js";
import { checkConfigInUse, readDoctorConfig } from "../doctor/config-checks.js";
import { checkAuditLogAnchor } from "../doctor/audit-log-checks.js";
import { checkServeStorage, STORAGE_CHECK_TIMEOUT_MS } from "../doctor/serve-checks.js";
import { PASSPHRASE_ENV } from "../home-access/secret-input.js";

function readProc(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8").trim();
  } catch {
    return undefined;
  }
}

/**
 * The `home` check of a directory that holds no home (`isExistingHome`: no config, policy, keys or vault),
 * in words a new user acts on: what is missing and the command that makes it. A directory that merely
 * exists (made by `acp proxy` for `pins.json` before `acp init`, or by hand) is no home: every command runs
 * there as before `acp init` (nothing audited, state in memory), so doctor fails it as it fails none at all.
 */
function noHomeCheck(home: string): HomeCheck {
  if (!existsSync(home))
    return {
      status: "fail",
      name: "home",
      detail: `\`${home}\` does not exist: run \`acp init\` to create the home there (or set ACP_HOME to the home you made)`,
    };
  if (statSync(home, { throwIfNoEntry: false })?.isDirectory() === false)
    return {
      status: "fail",
      name: "home",
      detail: `\`${home}\` is not a directory: set ACP_HOME to your home, or move the file away and run \`acp init\``,
    };
  let names: string[] | undefined;
  try {
    names = readdirSync(home);
  } catch {
    // unreadable: what is missing is said all the same
  }
  const left =
    names === undefined
      ? ""
      : names.length === 0
        ? " (the directory is empty)"
        : names.includes("pins.json")
          ? " (pins.json there is what acp proxy keeps before acp init; acp init keeps it)"
          : "";
  return {
    status: "fail",
    name: "home",
    detail: `\`${home}\` is no acp home yet: it holds no config.yml, policy.yml, keys/ or vault.json${left}; run \`acp init\` to make it one (until then acp proxy audits nothing and keeps its state in memory)`,
  };
}

/**
 * Every check of a home, in order, with the config file `config` (default the home's config.yml) checked as
 * `acp proxy --config` would check it. Never prompts; never prints a secret. A directory that holds no home
 * (`isExistingHome`) gets one failed `home` check saying what to run, not a failure per missing file.
 */
export function runDoctorChecks(
  home: string,
  passphrase: string | undefined,
  config?: string,
  io?: PathIo,
): HomeCheck[] {
  const isolation = checkIsolation({ platform: process.platform, uid: process.getuid?.(), read: readProc });
  if (!isExistingHome(home)) return [noHomeCheck(home), isolation];
  const keys = checkKeys(home, passphrase);
  const path = config ?? join(home, "config.yml");
  const read = readDoctorConfig(path);
  // the home's own config.yml may be absent (a home written by hand): its policy is then the home's policy.yml
  const forPolicy =
    read instanceof CliError && config === undefined && !existsSync(path) ? { path, document: null, values: {} } : read;
  const checks = [
    { status: "ok", name: "home", detail: home } as const,
    ...checkHomePermissions(home),
    ...keys.checks,
    ...checkVault(home, keys.seed),
    ...checkConfigInUse(home, read),
    checkPolicy(home, forPolicy, io),
    isolation,
  ];
  keys.seed?.fill(0);
  return checks;
}

/** Registers `acp doctor`. */
export function registerDoctor(parent: Command, ctx: CliContext): void {
  parent
    .command("doctor")
    .description(
      "check the home: permissions, keys (and that they open), vault, the config file (every key, as acp proxy " +
        "and acp serve check it), consent graph, policy, the audit log's anchor, isolation support, and that acp serve's database answers, agrees on the time and holds the node's audit anchor",
    )
    .option("--json", "print the checks as JSON")
    .option(
      "--config <file>",
      "check this config file instead of $ACP_HOME/config.yml, as `acp proxy --config FILE` would use it",
    )
    .addHelpText(
      "after",
      `
A directory with no config.yml, policy.yml, keys/ or vault.json is no home yet (even with pins.json,
which acp proxy keeps there before acp init): doctor fails "home", says what is missing, and names
acp init; no other check of the home is run.

Each check is one line: ok|warn|fail  NAME  DETAIL. With ACP_PASSPHRASE set, doctor also opens the
private key and the vault; without it, it says so and does not ask. The config file is checked the way
acp proxy and acp run check it before they start: every problem that would stop them (exit 4) is a
failed check with the same message (config: a top-level key no command reads, with the closest one,
or a version other than "1"; proxy, credentials, redaction, session, graph, channel; sandbox for acp
run, whose caps, from sandbox.max_processes, sandbox.max_memory and sandbox.max_cpu or the defaults,
"sandbox caps" says). The audit log (audit.jsonl) must still hold its anchor's signed checkpoint (audit.jsonl.checkpoint)
at its line, as acp proxy and acp run require (audit log; else it fails: run acp audit verify); a log
with signed checkpoints and no anchor is a warning naming the file; one whose checkpoints another key
signed (made before acp init made this home's key) fails, naming what to move aside. config.yml's serve: and storage: sections are checked as acp serve checks them (serve);
a password written in storage.url is a warning (give the URL in ACP_STORAGE_URL instead, or set
PGPASSWORD); the database acp serve would use (ACP_STORAGE_URL, else storage.url) must answer within
${STORAGE_CHECK_TIMEOUT_MS / 1000} s (storage; nothing is changed in it, the password is never printed). When it
answers: this machine's clock must be within 2 s of the database's, as acp serve and acp approve
require (clock, with the offset measured; else set the clock: NTP), and the home's node anchor for
that database (audit-postgres-….checkpoint) must still be a row of the database byte for byte (audit
anchor; none is a warning once the chain holds a checkpoint, naming its rows: a first start there verifies
the whole chain before it anchors; none before the chain's first checkpoint is fine; a row gone or
changed fails: run acp audit verify; so does a storage URL that now reaches another database than the
home last anchored through it, audit_anchor_database_changed: see acp serve --accept-moved-database).

Examples:
  acp doctor
  ACP_PASSPHRASE=… acp doctor --json | jq '.checks[] | select(.status != "ok")'
  cp ~/.acp/config.yml team-config.yml && acp doctor --config team-config.yml   # a config file kept elsewhere

Exit codes: 0 healthy (warnings allowed), 1 at least one check failed, 2 usage (an unknown option).`,
    )
    .action(async (options: { json?: boolean; config?: string }) => {
      const passphrase = ctx.io.env[PASSPHRASE_ENV];
      const config = options.config !== undefined ? resolvePath(ctx.io, options.config) : undefined;
      const home = resolveHome(ctx.io);
      const checks = runDoctorChecks(home, passphrase === "" ? undefined : passphrase, config, ctx.io);
      // before `isolation`, the machine's check, which stays last
      if (isExistingHome(home)) checks.splice(checks.length - 1, 0, await checkAuditLogAnchor(home));
      checks.splice(checks.length - 1, 0, ...(await checkServeStorage(home, ctx.io.env, ctx.io.now)));
      const healthy = checks.every((c) => c.status !== "fail");
      if (options.json === true) printJson(ctx, { healthy, checks });
      else for (const c of checks) printLine(ctx, `${c.status.padEnd(4)}  ${c.name}  ${c.detail}`);
      ctx.exitCode = healthy ? EXIT.ok : EXIT.error;
    });
}

import { existsSync, readFileSync } from "node:fs";
import type { Command } from "commander";
import { checkHomePermissions, type HomeCheck } from "@acp/store";
import { printJson, printLine, resolveHome, type CliContext } from "../context.js";
import { EXIT } from "../exit-codes.js";
import { checkIsolation } from "../doctor/isolation.js";
import { checkKeys, checkPolicy, checkSessionSettings, checkVaultAndConfig } from "../doctor/home-checks.js";
import { PASSPHRASE_ENV } from "../home-access/secret-input.js";

function readProc(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8").trim();
  } catch {
    return undefined;
  }
}

/** Every check of a home, in order. Never prompts; never prints a secret. */
export function runDoctorChecks(home: string, passphrase: string | undefined): HomeCheck[] {
  const isolation = checkIsolation({ platform: process.platform, uid: process.getuid?.(), read: readProc });
  if (!existsSync(home)) {
    return [{ status: "fail", name: "home", detail: `\`${home}\` does not exist (run \`acp init\`)` }, isolation];
  }
  const keys = checkKeys(home, passphrase);
  const checks = [
    { status: "ok", name: "home", detail: home } as const,
    ...checkHomePermissions(home),
    ...keys.checks,
    ...checkVaultAndConfig(home, keys.seed),
    checkPolicy(home),
    checkSessionSettings(home),
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
      "check the home: permissions, keys (and that they open), vault, config secrets, policy, session settings, isolation support",
    )
    .option("--json", "print the checks as JSON")
    .addHelpText(
      "after",
      `
Each check is one line: ok|warn|fail  NAME  DETAIL. With ACP_PASSPHRASE set, doctor also opens the
private key and the vault; without it, it says so and does not ask.

Examples:
  acp doctor
  ACP_PASSPHRASE=… acp doctor --json | jq '.checks[] | select(.status != "ok")'

Exit codes: 0 healthy (warnings allowed), 1 at least one check failed.`,
    )
    .action((options: { json?: boolean }) => {
      const passphrase = ctx.io.env[PASSPHRASE_ENV];
      const checks = runDoctorChecks(resolveHome(ctx.io), passphrase === "" ? undefined : passphrase);
      const healthy = checks.every((c) => c.status !== "fail");
      if (options.json === true) printJson(ctx, { healthy, checks });
      else for (const c of checks) printLine(ctx, `${c.status.padEnd(4)}  ${c.name}  ${c.detail}`);
      ctx.exitCode = healthy ? EXIT.ok : EXIT.error;
    });
}

/**
 * A home's other trust files owned by another user, with acp running as root (`acp run --isolation netns`):
 * the audit anchor beside the log (whoever owns it can replace it and hide a cut of the log) and config.yml
 * (whoever owns it names the policy and the commands acp runs). The reading command refuses, naming the
 * file, its owner and the `chown` fix, and changes nothing; chowned back it works.
 */
import { spawnSync } from "node:child_process";
import { chownSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { homePaths, openAuditLog } from "@acp/store";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";
import { runCli } from "./run.js";

const ACP = join(fileURLToPath(new URL("../../..", import.meta.url)), "packages/cli/bin/acp.js");
const NOBODY = 65534;
const root = tempRoot("trust-owner");
afterAll(root.cleanup);

/** `acp serve --port 0`, a real process; stopped after 30 s should it start (the old code did). */
function serve(env: Record<string, string>): { code: number | null; stderr: string } {
  const out = spawnSync(process.execPath, [ACP, "serve", "--port", "0"], {
    env: { PATH: process.env["PATH"] ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
    encoding: "utf8",
    timeout: 30_000,
  });
  return { code: out.status, stderr: out.stderr };
}

// chown needs root: this machine runs the tests as root
describe.runIf(process.getuid?.() === 0)("a home's trust files another user owns, with acp running as root", () => {
  it("acp audit verify refuses the anchor beside the home's log owned by nobody (exit 1), and verifies once chowned back", async () => {
    const { home, key } = fixtureHome(root.dir);
    const log = join(home, "audit.jsonl");
    const writer = await openAuditLog(log, { clock: () => new Date(), signer: key.privateKey });
    for (let i = 0; i < 3; i++) await writer.append({ event_type: "policy_evaluated", tool: "t", decision: "accept" });
    await writer.close();
    const anchor = `${log}.checkpoint`;
    const before = [readFileSync(log), readFileSync(anchor)];
    chownSync(anchor, NOBODY, NOBODY);
    const env = envFor(home);
    const out = await runCli(["audit", "verify"], { env });
    expect(out.code).toBe(1);
    expect(out.stderr).toContain(`\`${anchor}\` is owned by uid ${NOBODY}, not by uid 0 that acp runs as`);
    expect(out.stderr).toContain("whoever owns an audit anchor can replace it and hide a cut of the log");
    expect(out.stderr).toContain(`run \`chown 0 ${anchor}\``);
    expect([readFileSync(log), readFileSync(anchor)]).toEqual(before);
    expect(statSync(anchor).uid).toBe(NOBODY);
    chownSync(anchor, 0, 0);
    expect((await runCli(["audit", "verify"], { env })).code).toBe(0);
  });

  it("acp serve refuses to start on a config.yml owned by nobody (exit 1, config_not_owned's message)", () => {
    const { home } = fixtureHome(root.dir);
    const p = homePaths(home).config;
    const before = readFileSync(p);
    chownSync(p, NOBODY, NOBODY);
    const out = serve(envFor(home));
    expect(out.code).toBe(1);
    expect(out.stderr).toContain(
      `\`${p}\` is owned by uid ${NOBODY}, not by uid 0 that acp runs as: whoever owns a config file can name the policy and the commands acp runs; check it, then run \`chown 0 ${p}\``,
    );
    expect(readFileSync(p).equals(before)).toBe(true);
    expect(statSync(p).uid).toBe(NOBODY);
  });

  it("acp policy validate (the policy config.yml names) refuses a config.yml owned by nobody, and reads it once chowned back", async () => {
    const { home } = fixtureHome(root.dir);
    const p = homePaths(home).config;
    const env = envFor(home);
    chownSync(p, NOBODY, NOBODY);
    const out = await runCli(["policy", "validate"], { env });
    expect(out.code).toBe(1);
    expect(out.stderr).toContain(`run \`chown 0 ${p}\``);
    chownSync(p, 0, 0);
    expect(await runCli(["policy", "validate"], { env })).toMatchObject({ code: 0 });
  });
});

import { spawnSync } from "node:child_process";
import { chownSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { homePaths } from "@acp/store";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";
import { runCli } from "./run.js";

const ACP = join(fileURLToPath(new URL("../../..", import.meta.url)), "packages/cli/bin/acp.js");
const NOBODY = 65534;
const root = tempRoot("secret-owner");
afterAll(root.cleanup);

/** `acp serve --port 0` as a person runs it, a real process; stopped after 30 s should it start (the old code did). */
function serve(env: Record<string, string>): { code: number | null; stderr: string } {
  const out = spawnSync(process.execPath, [ACP, "serve", "--port", "0"], {
    env: { PATH: process.env["PATH"] ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
    encoding: "utf8",
    timeout: 30_000,
  });
  return { code: out.status, stderr: out.stderr };
}

// chown needs root: this machine runs the tests as root (as `acp run --isolation netns` does)
describe.runIf(process.getuid?.() === 0)("a key or vault another user owns, with acp running as root", () => {
  it("acp serve refuses to start on a private key owned by nobody (exit 1, naming the file, owner and chown)", () => {
    const { home } = fixtureHome(root.dir);
    const p = homePaths(home).privateKey;
    const before = readFileSync(p);
    chownSync(p, NOBODY, NOBODY);
    const out = serve(envFor(home));
    expect(out.code).toBe(1);
    expect(out.stderr).toContain(`\`${p}\` is owned by uid ${NOBODY}, not by uid 0 that acp runs as`);
    expect(out.stderr).toContain(`run \`chown 0 ${p}\``);
    expect(readFileSync(p).equals(before)).toBe(true);
    expect(statSync(p).uid).toBe(NOBODY);
  });

  it("acp vault list refuses a vault or public key owned by nobody, and works once they are chowned back", async () => {
    const { home } = fixtureHome(root.dir);
    const env = envFor(home);
    expect((await runCli(["vault", "set", "A"], { env, stdin: "a" })).code).toBe(0);
    const p = homePaths(home);
    chownSync(p.vault, NOBODY, NOBODY);
    const vault = await runCli(["vault", "list"], { env });
    expect(vault.code).toBe(1);
    expect(vault.stderr).toContain(`run \`chown 0 ${p.vault}\``);
    chownSync(p.vault, 0, 0);
    chownSync(p.publicKey, NOBODY, NOBODY);
    const key = await runCli(["vault", "list"], { env });
    expect(key.code).toBe(1);
    expect(key.stderr).toContain(`\`${p.publicKey}\` is owned by uid ${NOBODY}`);
    chownSync(p.publicKey, 0, 0);
    expect(await runCli(["vault", "list"], { env })).toMatchObject({ code: 0, stdout: "A\n" });
  });

  it("acp doctor fails the permission and key checks by the same rule", async () => {
    const { home } = fixtureHome(root.dir);
    const p = homePaths(home);
    chownSync(p.privateKey, NOBODY, NOBODY);
    const out = await runCli(["doctor", "--json"], { env: envFor(home) });
    expect(out.code).not.toBe(0);
    const checks = (JSON.parse(out.stdout) as { checks: { status: string; name: string; detail: string }[] }).checks;
    expect(checks.find((c) => c.name === "permissions keys/private.key")?.status).toBe("fail");
    const key = checks.find((c) => c.name === "private key");
    expect(key?.status).toBe("fail");
    expect(key?.detail).toContain(`run \`chown 0 ${p.privateKey}\``);
  });
});

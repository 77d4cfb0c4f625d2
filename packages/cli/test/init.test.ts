import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parsePolicy } from "@acp/core";
import { homePaths, loadMasterSeed, readPrivateKeyFile } from "@acp/store";
import { runDoctorChecks } from "../src/commands/doctor.js";
import { checkServeStorage } from "../src/doctor/serve-checks.js";
import { readConfigFile } from "../src/wiring/config-file.js";
import { checkServeConfig } from "../src/wiring/serve-config.js";
import { runCli } from "./run.js";
import { envFor, tempRoot } from "./home-fixture.js";

const root = tempRoot("init");
afterAll(root.cleanup);

describe("acp init", () => {
  it("creates a 0700 home with config, a valid safe policy and an encrypted key pair", async () => {
    const home = join(root.dir, "a");
    const r = await runCli(["init", "--json"], { env: envFor(home, "init passphrase") });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { public_key: string; private_key_encrypted: boolean; files: string[] };
    const p = homePaths(home);
    expect(statSync(home).mode & 0o777).toBe(0o700);
    expect(statSync(p.privateKey).mode & 0o777).toBe(0o600);
    expect(out.files).toEqual([p.config, p.policy, p.privateKey, p.publicKey]);
    expect(out.private_key_encrypted).toBe(true);
    expect(readFileSync(p.publicKey, "utf8").trim()).toBe(out.public_key);
    const key = readPrivateKeyFile(home);
    expect(key.ok && key.value.protection).toBe("scrypt-aes-256-gcm");
    if (key.ok && key.value.protection !== "none") expect(key.value.kdf).toMatchObject({ log_n: 17, r: 8, p: 1 });
    expect(loadMasterSeed(home, "init passphrase").ok).toBe(true);
    expect(loadMasterSeed(home, "other").ok).toBe(false);
    expect(parsePolicy(readFileSync(p.policy, "utf8")).ok).toBe(true);
    expect(readFileSync(p.config, "utf8")).toContain(`policy: "policy.yml"`);
  });

  it("writes 0600 files and 0700 directories under a permissive umask, and its key passes the checks", async () => {
    const home = join(root.dir, "umask");
    const old = process.umask(0o000);
    let r;
    try {
      r = await runCli(["init"], { env: envFor(home, "init passphrase") });
      expect((await runCli(["vault", "set", "A"], { env: envFor(home, "init passphrase"), stdin: "a" })).code).toBe(0);
    } finally {
      process.umask(old);
    }
    expect(r.code).toBe(0);
    const p = homePaths(home);
    for (const f of [p.config, p.policy, p.privateKey, p.publicKey, p.vault])
      expect(statSync(f).mode & 0o777).toBe(0o600);
    for (const d of [home, p.keysDir]) expect(statSync(d).mode & 0o777).toBe(0o700);
    expect(loadMasterSeed(home, "init passphrase").ok).toBe(true);
    const doctor = await runCli(["doctor", "--json"], { env: envFor(home, "init passphrase") });
    const checks = (JSON.parse(doctor.stdout) as { checks: { status: string; name: string }[] }).checks;
    expect(
      checks
        .filter((c) => c.name.startsWith("permissions") || c.name === "private key" || c.name === "vault")
        .filter((c) => c.status !== "ok"),
    ).toEqual([]);
  });

  it("refuses to overwrite an existing home without --force, and replaces the keys with it", async () => {
    const home = join(root.dir, "b");
    const env = { ...envFor(home), ACP_PASSPHRASE: "pw" };
    expect((await runCli(["init"], { env })).code).toBe(0);
    const before = readFileSync(homePaths(home).publicKey, "utf8");
    const again = await runCli(["init"], { env });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already holds an acp home \(use --force/);
    expect(readFileSync(homePaths(home).publicKey, "utf8")).toBe(before);
    const forced = await runCli(["init", "--force"], { env });
    expect(forced.code).toBe(0);
    expect(readFileSync(homePaths(home).publicKey, "utf8")).not.toBe(before);
  });

  it("stops with a clear error when there is no passphrase and no terminal, creating nothing", async () => {
    const home = join(root.dir, "c");
    const r = await runCli(["init"], { env: envFor(home, null) });
    expect(r.code).toBe(1);
    // what to do, all of it: the variable, a terminal, or (CI, a throwaway home) no passphrase at all
    expect(r.stderr).toBe(
      "acp: no passphrase for the new key: set ACP_PASSPHRASE, run in a terminal to be asked, or for a throwaway " +
        "home `acp init --no-passphrase` (key_passphrase_required)\n",
    );
    expect(existsSync(home)).toBe(false);
  });

  it("ends with the next steps: doctor, then the proxy in the MCP client with ACP_PASSPHRASE in its env", async () => {
    const home = join(root.dir, "next");
    const r = await runCli(["init"], { env: envFor(home) });
    expect(r.code).toBe(0);
    expect(r.stdout.trimEnd().split("\n").slice(-2)).toEqual([
      "next: review policy.yml, then `acp doctor`",
      "then: `acp proxy --upstream '…'` as the server's command in your MCP client, with ACP_PASSPHRASE in its env (`acp docs guides/proxy`)",
    ]);
  });

  it("stores the key unencrypted with --no-passphrase, loudly and marked so", async () => {
    const home = join(root.dir, "d");
    const r = await runCli(["init", "--no-passphrase"], { env: envFor(home, null) });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/WARNING: --no-passphrase stores the private key UNENCRYPTED/);
    expect(r.stdout).toContain("private key: UNENCRYPTED");
    // no passphrase to hand the proxy: the next step does not ask for one
    expect(r.stdout.trimEnd().split("\n").at(-1)).toBe(
      "then: `acp proxy --upstream '…'` as the server's command in your MCP client (`acp docs guides/proxy`)",
    );
    const key = JSON.parse(readFileSync(homePaths(home).privateKey, "utf8")) as { protection: string; warning: string };
    expect(key.protection).toBe("none");
    expect(key.warning).toMatch(/^UNENCRYPTED/);
  });

  it("teaches in --help", async () => {
    const r = await runCli(["init", "--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/--no-passphrase/);
    expect(r.stdout).toMatch(/Examples:/);
  });
});

describe("acp init's starter config.yml", () => {
  /** The template with the first "# " of every line of its commented `serve:` and `storage:` blocks removed. */
  function uncommented(text: string): string {
    const lines = text.split("\n");
    let inBlock = false;
    return lines
      .map((line) => {
        if (line === "# serve:" || line === "# storage:") inBlock = true;
        else if (line.trim() === "") inBlock = false;
        return inBlock ? line.replace(/^# /, "") : line;
      })
      .join("\n");
  }

  it("has commented serve: and storage: examples that, uncommented, are what acp serve and acp doctor accept", async () => {
    const home = join(root.dir, "starter");
    expect((await runCli(["init"], { env: envFor(home, "init passphrase") })).code).toBe(0);
    const p = homePaths(home);
    const text = readFileSync(p.config, "utf8");
    expect(text).toContain("# serve:\n");
    expect(text).toContain("# storage:\n");
    const open = uncommented(text);
    expect(open).not.toBe(text);
    writeFileSync(p.config, open);
    const values = readConfigFile(p.config, true).values;
    expect(checkServeConfig(values)).toEqual({
      ok: true,
      value: {
        port: 8787,
        bind: "127.0.0.1",
        publicUrl: "https://acp.example.com",
        insecurePlainHttp: false,
        decisionAudit: "queued",
        callerBudget: { units: 33_554_432, windowMs: 60_000 },
        pendingPerCaller: 250,
        storageUrl: "postgres://acp@127.0.0.1:5432/acp",
        storageConnectWait: 30,
      },
    });
    // the proxy's own checks and the serve check (not the database: no server is expected at that URL)
    const checks = runDoctorChecks(home, "init passphrase");
    expect(checks.filter((c) => c.status === "fail")).toEqual([]);
    const serveChecks = await checkServeStorage(home, {});
    expect(serveChecks.find((c) => c.name === "serve")).toEqual({
      status: "ok",
      name: "serve",
      detail: "acp serve: port 8787, bind 127.0.0.1, public URL https://acp.example.com, decision audit queued",
    });
    // no password in the example URL: no warning
    expect(serveChecks.find((c) => c.name === "storage.url")).toBeUndefined();
  });
});

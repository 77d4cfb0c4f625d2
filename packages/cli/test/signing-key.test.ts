import { afterAll, describe, expect, it } from "vitest";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { homeSigningKey } from "../src/wiring/signing-key.js";
import { createProxyWiring } from "../src/wiring/proxy-wiring.js";
import type { CliContext, CliIo } from "../src/context.js";
import { fixtureHome, PASSPHRASE, tempRoot } from "./home-fixture.js";
import { runCli } from "./run.js";

const root = tempRoot("signing-key");
afterAll(root.cleanup);

function io(env: Record<string, string>): CliIo {
  return {
    stdout: { write: () => true },
    stderr: { write: () => true },
    readStdin: () => Promise.resolve(""),
    stdinIsTTY: false,
    env,
    cwd: root.dir,
    now: () => new Date("2026-01-15T12:00:00Z"),
  };
}

describe("the proxy's signing key: what to fix when it does not open", () => {
  const { home, key } = fixtureHome(root.dir);

  it("opens with the right ACP_PASSPHRASE", async () => {
    const pair = await homeSigningKey(io({ ACP_PASSPHRASE: PASSPHRASE }), home, () => undefined).get();
    expect(pair.publicKeyHex).toBe(key.publicKeyHex);
  });

  it("without ACP_PASSPHRASE: says to set it where the proxy runs (no terminal can ask for it)", async () => {
    const err = await homeSigningKey(io({}), home, () => undefined)
      .get()
      .then(
        () => undefined,
        (e: unknown) => e as Error,
      );
    expect(err?.message).toBe(
      "the private key is encrypted and ACP_PASSPHRASE is not set (set it in the proxy's environment, e.g. the `env` of its entry in the MCP client's config)",
    );
    expect(err?.message).not.toMatch(/terminal/);
  });

  it("says where to set it for the holder: acp run's environment, the guard's option or program", async () => {
    const message = (holder: "run" | "guard"): Promise<string> =>
      homeSigningKey(io({}), home, () => undefined, holder)
        .get()
        .then(
          () => "opened",
          (e: unknown) => (e as Error).message,
        );
    expect(await message("run")).toBe(
      "the private key is encrypted and ACP_PASSPHRASE is not set (set it in the environment `acp run` is started in)",
    );
    expect(await message("guard")).toBe(
      "the private key is encrypted and ACP_PASSPHRASE is not set (pass `passphrase` to openGuard, or set it in the environment of the program that opens the guard)",
    );
  });

  it("with a wrong ACP_PASSPHRASE: says it is set but wrong, not to set it", async () => {
    const err = await homeSigningKey(io({ ACP_PASSPHRASE: "wrong" }), home, () => undefined)
      .get()
      .then(
        () => undefined,
        (e: unknown) => e as Error,
      );
    expect(err?.message).toContain("ACP_PASSPHRASE is set but does not open it");
    expect(err?.message).not.toContain("set ACP_PASSPHRASE for the proxy");
  });

  async function failure(home: string): Promise<string | undefined> {
    const err = await homeSigningKey(io({ ACP_PASSPHRASE: PASSPHRASE }), home, () => undefined)
      .get()
      .then(
        () => undefined,
        (e: unknown) => e as Error,
      );
    return err?.message;
  }

  it("a private key others can read: says chmod, not that the (right) passphrase does not open it", async () => {
    const { home: open } = fixtureHome(root.dir);
    chmodSync(join(open, "keys", "private.key"), 0o644);
    const message = await failure(open);
    expect(message).toContain("chmod 600");
    expect(message).not.toContain("ACP_PASSPHRASE");
  });

  it("a public key others can write: says chmod, not a passphrase hint", async () => {
    const { home: open } = fixtureHome(root.dir);
    chmodSync(join(open, "keys", "public.key"), 0o666);
    const message = await failure(open);
    expect(message).toContain("chmod go-w");
    expect(message).not.toContain("ACP_PASSPHRASE");
  });

  it("weak scrypt settings: says not to trust the file, not a passphrase hint", async () => {
    const { home: weak } = fixtureHome(root.dir);
    const path = join(weak, "keys", "private.key");
    const file = JSON.parse(readFileSync(path, "utf8")) as { kdf: { log_n: number } };
    file.kdf.log_n = 10;
    writeFileSync(path, JSON.stringify(file), { mode: 0o600 });
    const message = await failure(weak);
    expect(message).toContain("scrypt parameters too weak");
    expect(message).not.toContain("ACP_PASSPHRASE");
  });

  it("a public key that is not the private key's pair: says so, not a passphrase hint", async () => {
    const { home: mixed } = fixtureHome(root.dir);
    writeFileSync(join(mixed, "keys", "public.key"), `${"ab".repeat(32)}\n`, { mode: 0o600 });
    const message = await failure(mixed);
    expect(message).toBe("keys/public.key and keys/private.key are not a pair");
  });
});

describe("the proxy's audit checkpoints without the key: the warning is about checkpoints", () => {
  it("says checkpoints are not signed and what to set, not that approvals are", async () => {
    const { home } = fixtureHome(root.dir);
    let stderr = "";
    const ctx: CliContext = {
      exitCode: 0,
      io: { ...io({ HOME: "/nonexistent-home", ACP_HOME: home }), stderr: { write: (s: string) => (stderr += s) } },
    };
    const wiring = createProxyWiring(ctx);
    try {
      await wiring.createAudit({ home }).record("tool_definition_changed", { server: "srv", tool: "echo" });
    } finally {
      await wiring.close();
    }
    expect(stderr).toContain(
      "acp proxy: audit checkpoints are not signed: the private key is encrypted and ACP_PASSPHRASE is not set (set it in the proxy's environment, e.g. the `env` of its entry in the MCP client's config)\n",
    );
    expect(stderr).not.toContain("approvals");
  });
});

describe("acp run without the passphrase: says to set it where acp run is started", () => {
  it("names acp run's environment, not a proxy's or an MCP client's config", async () => {
    const { home } = fixtureHome(root.dir);
    const out = await runCli(["run", "--isolation", "none", "--", "/bin/true"], {
      env: { PATH: process.env["PATH"] ?? "", HOME: root.dir, ACP_HOME: home },
      cwd: root.dir,
    });
    expect(out.code).toBe(0);
    expect(out.stderr).toContain(
      "the private key is encrypted and ACP_PASSPHRASE is not set (set it in the environment `acp run` is started in)",
    );
    expect(out.stderr).not.toMatch(/proxy's environment|MCP client's config/);
  });
});

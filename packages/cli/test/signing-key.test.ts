import { afterAll, describe, expect, it } from "vitest";
import { homeSigningKey } from "../src/wiring/signing-key.js";
import type { CliIo } from "../src/context.js";
import { fixtureHome, PASSPHRASE, tempRoot } from "./home-fixture.js";

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
      "the private key is encrypted and ACP_PASSPHRASE is not set (set it in the proxy's environment, e.g. the `env` of its entry in the MCP client's config, for the proxy to sign approvals)",
    );
    expect(err?.message).not.toMatch(/terminal/);
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
});

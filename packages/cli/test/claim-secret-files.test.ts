import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openStateDb } from "@acp/store";
import { runCli } from "./run.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A provider home with a state.db and a provider key of `mode`. */
function home(mode: number, key = randomBytes(32).toString("hex")): { env: Record<string, string>; key: string } {
  const h = mkdtempSync(join(tmpdir(), "acp-claim-secret-"));
  dirs.push(h);
  mkdirSync(join(h, "claim"), { mode: 0o700 });
  openStateDb(join(h, "state.db")).close();
  const path = join(h, "claim", "provider.key");
  writeFileSync(path, key, { mode: 0o600 });
  chmodSync(path, mode);
  return { env: { HOME: h, ACP_HOME: h }, key: path };
}

const HANDLE = "a".repeat(26);

describe("the claim secrets are refused when others can read them", () => {
  it("a provider key readable by group or others stops serve and takedown (exit 1, naming the chmod); 0600 is used", async () => {
    for (const mode of [0o644, 0o640, 0o604]) {
      const h = home(mode);
      const serve = await runCli(["claim", "serve", "--port", "0"], { env: h.env });
      expect([mode.toString(8), serve.code]).toEqual([mode.toString(8), 1]);
      expect(serve.stderr).toContain(`chmod 600 ${h.key}`);
      const down = await runCli(["claim", "takedown", HANDLE], { env: h.env });
      expect([mode.toString(8), down.code]).toEqual([mode.toString(8), 1]);
      expect(down.stderr).toContain(`chmod 600 ${h.key}`);
    }
    const ok = await runCli(["claim", "takedown", HANDLE], { env: home(0o600).env });
    expect(ok.code).toBe(3); // read the key, found no such sandbox
  });

  it("a provider key of more than a key's bytes is an invalid key (exit 4), not read whole", async () => {
    const h = home(0o600, "0".repeat(2 * 1024 * 1024));
    const down = await runCli(["claim", "takedown", HANDLE], { env: h.env });
    expect(down.code).toBe(4);
    expect(down.stderr).toContain("expected 64 hex characters");
  });

  it("an issuer key readable by group or others is refused by issue (exit 1)", async () => {
    const h = home(0o600);
    expect((await runCli(["claim", "issuer", "keygen"], { env: h.env })).code).toBe(0);
    const issuerKey = join(h.env["HOME"] ?? "", "claim", "issuer.key");
    const args = ["claim", "issuer", "issue", "--subject", "agent-1", "--audience", "http://api.localhost:8080"];
    expect((await runCli(args, { env: h.env, now: new Date() })).code).toBe(0);
    chmodSync(issuerKey, 0o644);
    const open = await runCli(args, { env: h.env, now: new Date() });
    expect(open.code).toBe(1);
    expect(open.stderr).toContain(`chmod 600 ${issuerKey}`);
  });
});

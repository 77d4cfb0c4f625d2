import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  createConsentRequest,
  ed25519KeyPairFromSeed,
  publicKeyHexToPem,
  signConsentResponse,
  type ConsentRequestV02,
  type ConsentResponseV02,
  type Ed25519KeyPair,
} from "@acp/core";
import { runCli } from "./run.js";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";

const root = tempRoot("proof");
afterAll(root.cleanup);
const T0 = new Date("2026-01-15T12:00:00.000Z");
const NOW = new Date("2026-01-15T12:00:30.000Z");
let n = 0;

function approval(key: Ed25519KeyPair): { request: ConsentRequestV02; response: ConsentResponseV02 } {
  const request = createConsentRequest(
    {
      agent: { id: "agent-1", name: "assistant", command: "node agent.js" },
      action: {
        tool: "send_email",
        server: "mail",
        category: "communication",
        risk_level: "high",
        parameters: { to: "bob@example.com" },
        description: "mail bob",
      },
      policy: { rule_id: "ask-communication", rule_name: "ask-communication", required_level: "high" },
      timeoutSeconds: 300,
    },
    { now: () => T0, randomUUID: () => `00000000-0000-4000-8000-${String(++n).padStart(12, "0")}` },
  );
  const response = signConsentResponse(
    { request, decision: "approved", approver: { id: "alice", channel: "terminal" }, validForSeconds: 60 },
    key,
    { now: () => T0 },
  );
  return { request, response };
}

function write(name: string, value: unknown): string {
  const path = join(root.dir, name);
  writeFileSync(path, typeof value === "string" ? value : JSON.stringify(value, null, 2));
  return path;
}

describe("acp proof verify", () => {
  it("exits 0 for a valid proof against the home's public key (bundle or --request)", async () => {
    const { home, key } = fixtureHome(root.dir);
    const { request, response } = approval(key);
    const bundle = write("bundle.json", { request, response });
    const r = await runCli(["proof", "verify", bundle], { env: envFor(home, null), now: NOW });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /^valid: approved `send_email` on `mail` \(request cr_[0-9a-f]+, valid until [^)]+\); approver, as the response states it \(not signed\): alice via terminal$/m,
    );
    const split = await runCli(
      ["proof", "verify", write("res.json", response), "--request", write("req.json", request), "--json"],
      { env: envFor(home, null), now: NOW },
    );
    expect(split.code).toBe(0);
    expect(JSON.parse(split.stdout)).toMatchObject({
      valid: true,
      decision: "approved",
      approved: true,
      approver: { id: "alice", channel: "terminal" },
      approver_signed: false,
    });
  });

  it("exits 3 with the reason for each kind of invalid proof", async () => {
    const { home, key } = fixtureHome(root.dir);
    const other = ed25519KeyPairFromSeed(new Uint8Array(32).fill(1));
    const { request, response } = approval(key);
    const env = envFor(home, null);
    const cases: [string, unknown, string[], Date][] = [
      ["payload_mismatch", { request, response: { ...response, decision: "denied" } }, [], NOW],
      ["wrong_key", approval(other), [], NOW],
      ["expired", { request, response }, [], new Date("2026-01-15T12:05:00.000Z")],
      ["malformed", { request, response: { ...response, extra: 1 } }, [], NOW],
      [
        "malformed",
        {
          request,
          response: { ...response, proof: { ...response.proof, signature: response.proof.signature.toUpperCase() } },
        },
        [],
        NOW,
      ],
      ["nonce_mismatch", { request: approval(key).request, response }, [], NOW],
      [
        "bad_signature",
        { request, response: { ...response, proof: { ...response.proof, signature: "0".repeat(128) } } },
        [],
        NOW,
      ],
      ["wrong_key", { request, response }, ["--public-key", other.publicKeyHex], NOW],
    ];
    for (const [reason, content, extra, now] of cases) {
      const r = await runCli(["proof", "verify", write("case.json", content), ...extra, "--json"], { env, now });
      expect(r.code, reason).toBe(3);
      expect((JSON.parse(r.stdout) as { reason: string }).reason).toBe(reason);
    }
    const notJson = await runCli(["proof", "verify", write("bad.json", "{not json")], { env, now: NOW });
    expect(notJson.code).toBe(3);
    expect(notJson.stdout).toMatch(/^invalid: malformed: `.*bad\.json` is not json/);
  });

  it("refuses the home's public key when others can change it (exit 1), not a key named with --public-key", async () => {
    const { home, key } = fixtureHome(root.dir);
    const bundle = write("writable-key.json", approval(key));
    const path = join(home, "keys", "public.key");
    chmodSync(path, 0o662);
    const r = await runCli(["proof", "verify", bundle], { env: envFor(home, null), now: NOW });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`\`${path}\` is writable by others (mode 0662)`);
    expect(r.stderr).toContain(`run \`chmod go-w ${path}\``);
    const named = await runCli(["proof", "verify", bundle, "--public-key", key.publicKeyHex], {
      env: envFor(home, null),
      now: NOW,
    });
    expect(named.code).toBe(0);
  });

  it("accepts a PEM public key file and refuses a file that is not a key", async () => {
    const { home, key } = fixtureHome(root.dir);
    const bundle = write("pem-bundle.json", approval(key));
    const pem = write("key.pem", publicKeyHexToPem(key.publicKeyHex));
    expect(
      (await runCli(["proof", "verify", bundle, "--public-key", pem], { env: envFor(home, null), now: NOW })).code,
    ).toBe(0);
    const notKey = await runCli(["proof", "verify", bundle, "--public-key", write("nk", "hello")], {
      env: envFor(home, null),
      now: NOW,
    });
    expect(notKey.code).toBe(2);
  });

  it("with --consume, spends the nonce durably: the second run is refused as replayed", async () => {
    const { home, key } = fixtureHome(root.dir);
    const bundle = write("once.json", approval(key));
    const first = await runCli(["proof", "verify", bundle, "--consume"], { env: envFor(home, null), now: NOW });
    expect(first.code).toBe(0);
    const second = await runCli(["proof", "verify", bundle, "--consume"], { env: envFor(home, null), now: NOW });
    expect(second.code).toBe(3);
    expect(second.stdout).toMatch(/^invalid: replayed: this approval was already used/);
    expect((await runCli(["proof", "verify", bundle], { env: envFor(home, null), now: NOW })).code).toBe(0);
  });

  it("needs the request (exit 2) and a readable file (exit 1)", async () => {
    const { home, key } = fixtureHome(root.dir);
    const res = write("only-response.json", approval(key).response);
    const noRequest = await runCli(["proof", "verify", res], { env: envFor(home, null), now: NOW });
    expect(noRequest.code).toBe(2);
    expect(noRequest.stderr).toMatch(/a proof is bound to its request: give --request FILE/);
    expect((await runCli(["proof", "verify", join(root.dir, "nope.json")], { env: envFor(home, null) })).code).toBe(1);
  });

  it("shows control characters of the files as escapes: the unsigned approver id cannot redraw the terminal", async () => {
    const { home, key } = fixtureHome(root.dir);
    const { request, response } = approval(key);
    const approver = { id: "mallory\r\u001b[2Kvalid: approved by alice", channel: "terminal" };
    const forged = write("forged-approver.json", { request, response: { ...response, approver } });
    const r = await runCli(["proof", "verify", forged], { env: envFor(home, null), now: NOW });
    expect(r.code).toBe(0); // approver is not covered by the signature (docs/reference/consent-proof.md)
    expect(r.stdout).not.toContain("\r");
    expect(r.stdout).not.toContain("\u001b");
    expect(r.stdout).toContain("(not signed): mallory\\u000d\\u001b[2Kvalid: approved by alice via terminal");
    const field = write("escape-field.json", { request, response: { ...response, "\u001b[31m": 1 } });
    const bad = await runCli(["proof", "verify", field], { env: envFor(home, null), now: NOW });
    expect(bad.code).toBe(3);
    expect(bad.stdout).not.toContain("\u001b");
  });
});

import { execFile } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { checkEventConsent, type AuditEventV02 } from "@acp/core";
import { runCli } from "./run.js";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";
import { connectProxy, ROOT } from "./proxy-client-fixture.js";

const POLICY = `version: "1"
default_action: deny
rules:
  - id: echo-asks
    match: { tool: echo }
    action: ask
    timeout: 60
`;

const CONSENT_TYPES = new Set([
  "consent_requested",
  "consent_approved",
  "consent_denied",
  "consent_expired",
  "consent_withdrawn",
]);

async function waitForPending(env: Record<string, string>): Promise<string> {
  for (let i = 0; i < 400; i++) {
    const out = await runCli(["pending", "--json"], { env, now: new Date() });
    const rows = JSON.parse(out.stdout || "[]") as { id: string }[];
    if (rows[0] !== undefined) return rows[0].id;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("no pending consent request appeared");
}

describe("acp proxy records each consent decision once (gate and broker together)", () => {
  const root = tempRoot("proxy-consent-once");
  let home = "";
  let env: Record<string, string> = {};
  const ids: { approved: string; denied: string; window: string } = { approved: "", denied: "", window: "" };
  let reusedText = "";

  async function answered(client: Client, message: string, answer: readonly string[]): Promise<string> {
    const call = client.callTool({ name: "echo", arguments: { message } }, undefined, { timeout: 60_000 });
    const id = await waitForPending(env);
    expect((await runCli([answer[0] as string, id, ...answer.slice(1)], { env, now: new Date() })).code).toBe(0);
    await call;
    return id;
  }

  beforeAll(async () => {
    if (!existsSync(join(ROOT, "packages/cli/dist/wiring/proxy-wiring.js"))) {
      await promisify(execFile)("npx", ["tsc", "-b", "packages/cli"], { cwd: ROOT }).catch(() => undefined);
    }
    ({ home } = fixtureHome(root.dir));
    writeFileSync(join(home, "policy.yml"), POLICY);
    env = envFor(home);
    const first = await connectProxy(env, { name: "consent-once-agent" });
    ids.approved = await answered(first, "approve me", ["approve"]);
    ids.denied = await answered(first, "deny me", ["deny"]);
    ids.window = await answered(first, "for ten minutes", ["approve", "--for", "10m"]);
    await first.close();
    // a client restarted: a new proxy, which honours the stored window without asking anyone
    const second = await connectProxy(env, { name: "consent-once-agent" });
    const reused = await second.callTool({ name: "echo", arguments: { message: "for ten minutes" } }, undefined, {
      timeout: 60_000,
    });
    reusedText = JSON.stringify(reused.content);
    await second.close();
  }, 180_000);

  afterAll(() => root.cleanup());

  const events = (): AuditEventV02[] =>
    readFileSync(join(home, "audit.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as AuditEventV02);
  const publicKey = (): string => readFileSync(join(home, "keys/public.key"), "utf8").trim();
  const consentOf = (id: string): AuditEventV02[] =>
    events().filter((e) => CONSENT_TYPES.has(e.event_type) && e.request_id === id);

  it("an ask then approve: one consent_requested and one consent_approved, whose response verifies", () => {
    const recorded = consentOf(ids.approved);
    expect(recorded.map((e) => e.event_type)).toEqual(["consent_requested", "consent_approved"]);
    const outcome = recorded[1] as AuditEventV02;
    expect(outcome.metadata["consent_response"]).toMatchObject({ request_id: ids.approved, decision: "approved" });
    expect(checkEventConsent(outcome, publicKey())).toEqual({ status: "valid" });
  });

  it("an ask then deny: one consent_requested and one consent_denied, whose response verifies", () => {
    const recorded = consentOf(ids.denied);
    expect(recorded.map((e) => e.event_type)).toEqual(["consent_requested", "consent_denied"]);
    const outcome = recorded[1] as AuditEventV02;
    expect(outcome.metadata["consent_response"]).toMatchObject({ request_id: ids.denied, decision: "denied" });
    expect(checkEventConsent(outcome, publicKey())).toEqual({ status: "valid" });
  });

  it("a stored window reused by another proxy asks nobody: no consent_requested, one reused consent_approved", () => {
    expect(reusedText).toContain("for ten minutes");
    const all = events();
    // the requests made: the three asked, not one more for the reuse (nor one without an id)
    expect(all.filter((e) => e.event_type === "consent_requested").map((e) => e.request_id)).toEqual([
      ids.approved,
      ids.denied,
      ids.window,
    ]);
    const approvals = consentOf(ids.window).filter((e) => e.event_type === "consent_approved");
    expect(approvals).toHaveLength(2);
    expect(approvals[0]?.metadata["reused"]).toBeUndefined();
    expect(approvals[1]?.metadata["reused"]).toBe(true);
    for (const approval of approvals) expect(checkEventConsent(approval, publicKey())).toEqual({ status: "valid" });
  });

  it("acp audit verify checks every one of these responses with the public key", async () => {
    const out = await runCli(["audit", "verify", "--json"], { env });
    expect(out.code).toBe(0);
    const json = JSON.parse(out.stdout) as { valid: boolean; consentResponses: { checked: number; unchecked: number } };
    expect(json.valid).toBe(true);
    expect(json.consentResponses).toMatchObject({ checked: 4, unchecked: 0 });
  });
});

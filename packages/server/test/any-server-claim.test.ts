/**
 * The decision service judges a caller whose `server` is only its word (the anonymous agents' token, a named
 * agent without servers) on the any-server policy: a deny or ask rule for a server holds whatever it names,
 * or none. A named agent held to servers (`agentServers`) names one that was checked: it is judged as named.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  compilePolicy,
  contractSource,
  createMemoryRateLimiter,
  createPipeline,
  parsePolicy,
  policySource,
  type Pipeline,
  type Policy,
} from "@acp/core";
import { anyServerPolicy } from "@acp/server";
import { APPROVER_TOKEN, at, eventually, openTestServerAt, READ_EVENT, readJson, type Json } from "./harness.js";

const POLICY = `version: "1"
default_action: allow
rules:
  - id: allow-reads
    match: { category: read }
    action: allow
  - id: deny-payment-refunds
    match: { server: payments, tool: "refund_*" }
    action: deny
  - id: deny-payment-etc
    match: { server: payments, tool: write_file, args: { path: "/etc/**" } }
    action: deny
  - id: ask-writes
    match: { tool: write_file }
    action: ask
  - id: allow-ledger
    match: { server: ledger }
    action: allow
`;

const ANON = "anonymous-agents-token-0123456789";
const LEDGER_BOT = "ledger-bot-token-0123456789abcd";
const SUPPORT = "support-agent-token-0123456789";

function parsed(text: string): Policy {
  const result = parsePolicy(text, { file: "policy.yml" });
  if (!result.ok) throw new Error(result.issues.map((i) => i.message).join("; "));
  return result.value;
}

/** The pipeline on a policy, as the harness builds it from text. */
function pipelineOn(policy: Policy): Pipeline {
  const sources = [policySource(compilePolicy(policy), { rateLimiter: createMemoryRateLimiter() }), contractSource()];
  return createPipeline(sources, { classify: policy.classify });
}

const home = mkdtempSync(join(tmpdir(), "acp-any-server-"));
let node: Awaited<ReturnType<typeof openTestServerAt>>;
beforeAll(async () => {
  node = await openTestServerAt(home, {
    pipeline: pipelineOn(parsed(POLICY)),
    anyServerPipeline: pipelineOn(anyServerPolicy(parsed(POLICY))),
    simulationPipeline: pipelineOn(parsed(POLICY)),
    anyServerRecheckPipeline: pipelineOn(anyServerPolicy(parsed(POLICY))),
    answerPollMs: 20,
    changePollMs: 50,
    approverToken: APPROVER_TOKEN,
    token: ANON,
    agentTokens: { ledger_bot: LEDGER_BOT, support: SUPPORT },
    agentServers: { ledger_bot: ["ledger"] },
  });
});
afterAll(async () => {
  await node.node.close();
  rmSync(home, { recursive: true, force: true });
});

async function post(path: string, token: string, body: unknown): Promise<Json> {
  const res = await fetch(`${node.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  return readJson(res);
}

describe("which server a request is for", () => {
  it("makes only deny and ask rules hold for any server", () => {
    const policy = parsed(POLICY);
    const rules = anyServerPolicy(policy).rules.map((r) => [r.id, r.match.server ?? null]);
    expect(rules).toEqual([
      ["allow-reads", null],
      ["deny-payment-refunds", null],
      ["deny-payment-etc", null],
      ["ask-writes", null],
      ["allow-ledger", "ledger"],
    ]);
    const plain = parsed(`version: "1"\ndefault_action: ask\nrules:\n  - match: { server: x }\n    action: allow\n`);
    expect(anyServerPolicy(plain)).toBe(plain);
  });

  it("refuses the anonymous token and an unscoped agent a denied tool whatever server they name", async () => {
    for (const token of [ANON, SUPPORT]) {
      for (const server of [{ server: "payments" }, { server: "ledger" }, { server: "other" }, {}]) {
        const answer = await post("/v1/decide", token, { tool: "refund_order", arguments: {}, ...server });
        expect([token, server, at(answer, "route")]).toEqual([token, server, "refuse"]);
        expect(at(answer, "decision", "rule")).toBe("policy:deny-payment-refunds");
      }
    }
  });

  it("judges an agent held to servers under the server it named, which was checked", async () => {
    const answer = await post("/v1/decide", LEDGER_BOT, { tool: "refund_order", server: "ledger", arguments: {} });
    expect([at(answer, "route"), at(answer, "decision", "rule")]).toEqual(["accept", "policy:allow-ledger"]);
  });

  it("judges a contract event (no server) of an unscoped caller on the any-server policy too", async () => {
    const answer = await post("/pre-tool-check", ANON, { ...READ_EVENT, tool_name: "refund_order" });
    expect(at(answer, "decision", "route")).toBe("refuse");
    expect(at(answer, "decision", "rule")).toBe("policy:deny-payment-refunds");
  });

  it("re-checks an unscoped caller's edited arguments on the any-server policy, waiting and completed", async () => {
    // an approval whose edit names /etc: the deny for payments holds for a caller that named `fs`
    const call = post("/v1/decide?wait=true", ANON, {
      tool: "write_file",
      server: "fs",
      arguments: { path: "/tmp/a" },
    });
    const id = await eventually(async () => {
      const res = await fetch(`${node.url}/v1/consent?status=pending`, {
        headers: { authorization: `Bearer ${ANON}` },
      });
      return (at(await readJson(res), "requests", 0, "id") as string | undefined) ?? null;
    });
    await post(`/v1/consent/${id}/response`, APPROVER_TOKEN, {
      decision: "approved_with_modifications",
      modifications: { path: "/etc/shadow" },
    });
    expect(await call).toMatchObject({
      route: "refuse",
      consent: { edit_refused: { rule: "policy:deny-payment-etc" } },
    });

    // the same through POST /v1/consent/{id}/complete, for a request whose waiting call is gone
    const left = "cr_00000000000000000000000000000a51";
    const now = Date.now();
    await node.node.stores.pending.insert({
      id: left,
      nonce: "n_00000000-0000-4000-8000-000000000a51",
      sessionId: "s",
      server: "fs",
      tool: "write_file",
      request: {
        type: "consent_request",
        version: "0.2.0",
        id: left,
        timestamp: new Date(now).toISOString(),
        expires_at: new Date(now + 120_000).toISOString(),
        agent: { id: "agent-1", name: "agent-1", command: "" },
        action: {
          tool: "write_file",
          server: "fs",
          category: "write",
          risk_level: "medium",
          parameters: { path: "/tmp/notes.txt" },
          description: "call `write_file` on `fs`",
        },
        policy: { rule_id: "policy:ask-writes", rule_name: "ask-writes", required_level: "medium" },
        nonce: "n_00000000-0000-4000-8000-000000000a51",
      },
      reasons: [],
      createdAtMs: now,
      expiresAtMs: now + 120_000,
    });
    await post(`/v1/consent/${left}/response`, APPROVER_TOKEN, {
      decision: "approved_with_modifications",
      modifications: { path: "/etc/shadow" },
    });
    expect(await post(`/v1/consent/${left}/complete`, ANON, {})).toMatchObject({
      outcome: "denied",
      edit_refused: { rule: "policy:deny-payment-etc" },
    });
  });
});

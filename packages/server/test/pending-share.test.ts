/**
 * Each caller's share of the waiting consent requests (`serve.pending_per_caller`): the agent a token names,
 * or every caller whose token names no agent together. A caller whose share is full is refused (`route:
 * refuse`, reason `caller_pending_full`, recorded in the audit) while the others are still asked.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { at, eventually, readJson, openTokenServer, type TokenServer } from "./harness.js";

const ANON = "anonymous-agents-token-0123456789";
const CI_BOT = "ci-bot-token-0123456789abcdef";
const SUPPORT = "support-agent-token-0123456789";

let server: TokenServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function open(perCaller: number): Promise<TokenServer> {
  server = await openTokenServer("pending-share", {
    token: ANON,
    agentTokens: { ci_bot: CI_BOT, support: SUPPORT },
    maxPending: 8,
    maxPendingPerCaller: perCaller,
  });
  return server;
}

interface AuditLine {
  readonly event_type: string;
  readonly agent: string | null;
  readonly decision?: string;
  readonly request_id?: string;
  readonly metadata?: { readonly reasons?: string[] };
}

async function events(s: TokenServer): Promise<AuditLine[]> {
  await s.node.stores.auditLog.flush();
  return readFileSync(join(s.home, "audit.jsonl"), "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as AuditLine);
}

async function waitingRows(s: TokenServer, n: number): Promise<{ id: string; nonce: string }[]> {
  return eventually(async () => {
    const rows = await s.node.stores.pending.listPending(Date.now());
    return rows.length === n ? rows : undefined;
  });
}

async function denyAll(s: TokenServer): Promise<void> {
  for (const row of await s.node.stores.pending.listPending(Date.now())) {
    await s.node.stores.pending.decide(
      row.id,
      "denied",
      { decision: "denied", approver: "t", nonce: row.nonce },
      Date.now(),
    );
  }
}

const ask = (s: TokenServer, token: string, n: number, agent?: string): Promise<Response> =>
  s.post("/v1/decide?wait=true", token, {
    tool: "write_file",
    arguments: { n },
    ...(agent !== undefined ? { agent } : {}),
  });

describe("each caller's share of the waiting consent requests", () => {
  it("refuses a named agent past its share, audited, while another agent is still asked", async () => {
    const s = await open(2);
    const flooding = [1, 2].map((n) => ask(s, CI_BOT, n));
    await waitingRows(s, 2);
    const third = await ask(s, CI_BOT, 3);
    expect(third.status).toBe(200);
    const answer = (await readJson(third)) as {
      decision_id: string;
      route: string;
      decision: { reasons: { code: string; message: string }[] };
    };
    expect(answer.route).toBe("refuse");
    const reason = answer.decision.reasons.find((r) => r.code === "caller_pending_full");
    expect(reason?.message).toContain("agent `ci_bot` has 2 consent requests waiting");
    // nothing written for it, and another agent is still put before a person
    const other = ask(s, SUPPORT, 4);
    await waitingRows(s, 3);
    const refused = (await events(s)).filter(
      (e) => e.event_type === "policy_evaluated" && e.request_id === answer.decision_id && e.decision === "refuse",
    );
    expect(refused).toHaveLength(1);
    expect(refused[0]?.agent).toBe("ci_bot");
    expect(refused[0]?.metadata?.reasons).toContain("pipeline:caller_pending_full");
    await denyAll(s);
    for (const res of await Promise.all([...flooding, other])) expect(at(await readJson(res), "route")).toBe("refuse");
  });

  it("holds every caller of the anonymous token to one share, whatever agent each names", async () => {
    const s = await open(2);
    // rotating the agent named in the body (or naming none) does not make a new share
    const flooding = [ask(s, ANON, 1, "x1"), ask(s, ANON, 2, "x2")];
    await waitingRows(s, 2);
    for (const agent of ["x3", undefined]) {
      const res = await ask(s, ANON, 3, agent);
      expect(res.status).toBe(200);
      const answer = (await readJson(res)) as {
        route: string;
        decision: { reasons: { code: string; message: string }[] };
      };
      expect(answer.route).toBe("refuse");
      const reason = answer.decision.reasons.find((r) => r.code === "caller_pending_full");
      expect(reason?.message).toContain("the callers whose token names no agent");
    }
    // a named agent still has its own share
    const named = ask(s, CI_BOT, 4);
    await waitingRows(s, 3);
    await denyAll(s);
    for (const res of await Promise.all([...flooding, named])) expect(at(await readJson(res), "route")).toBe("refuse");
  });
});

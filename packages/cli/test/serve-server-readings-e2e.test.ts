/**
 * `acp serve` with a policy whose `classify:` entries name servers and a config.yml `graph.mapping` whose
 * entries do: a caller whose server is its own word (here loopback without a token) is judged as named, as
 * for no server and as for each server those entries name, and the strictest answer stands (ADR 0006). The
 * entries can make its call stricter, never looser.
 */
import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { freshHome, startServe } from "./serve-fixture.js";

const POLICY = `version: "1"
default_action: ask
rules:
  - id: deny-financial
    match: { category: financial }
    action: deny
  - id: allow-reads
    match: { category: read }
    action: allow
  - id: allow-known
    match: { tool: "{refund_order,void_invoice,export_report}" }
    action: allow
classify:
  - tool: export_report
    server: payments
    category: financial
  - tool: rotate_widget
    server: sandbox
    category: read
`;

const GRAPH = {
  payments: { trust_level: "high", autonomous: ["sandbox_refund"], requires_approval: ["refund"], blocked: [] },
};

const CONFIG = `
graph:
  mapping:
    - { server: payments, tool: refund_order, domain: payments, action: refund }
    - { server: sandbox, tool: void_invoice, domain: payments, action: sandbox_refund }
    - { tool: void_invoice, domain: payments, action: refund }
`;

async function decide(url: string, body: unknown): Promise<{ route: string; rule: string | null; codes: string[] }> {
  const res = await fetch(`${url}/v1/decide`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  const answer = (await res.json()) as {
    route: string;
    decision: { rule: string | null; reasons: { code: string }[] };
  };
  return { route: answer.route, rule: answer.decision.rule, codes: answer.decision.reasons.map((r) => r.code) };
}

describe("acp serve: classify: and graph.mapping entries for a server, for a caller whose server is its word", () => {
  it("tighten its call when another server's entry would, and do not loosen it for the server it names", async () => {
    const home = freshHome();
    writeFileSync(join(home, "policy.yml"), POLICY);
    writeFileSync(join(home, "consent-graph.json"), JSON.stringify(GRAPH));
    appendFileSync(join(home, "config.yml"), CONFIG);
    const serve = startServe(home, ["--port", "0"]);
    try {
      const { url } = await serve.ready;
      const call = (tool: string, server: string) => decide(url, { tool, server, arguments: {} });
      // stricter under another server's entry: the graph's requires_approval, the classify entry's financial
      expect(await call("refund_order", "docs")).toMatchObject({ route: "ask" });
      expect((await call("refund_order", "docs")).codes).toContain("server_unverified");
      expect(await call("export_report", "docs")).toMatchObject({ route: "refuse", rule: "policy:deny-financial" });
      // looser under the named server's own entry: not taken
      expect(await call("rotate_widget", "sandbox")).toMatchObject({ route: "ask" });
      expect(await call("void_invoice", "sandbox")).toMatchObject({ route: "ask" });
      // nothing stricter under any reading: as named
      expect(await call("read_page", "docs")).toMatchObject({ route: "accept", rule: "policy:allow-reads" });
    } finally {
      serve.stop();
      await serve.done;
    }
  });
});

/**
 * `acp serve`: the `server` of a request is the caller's word unless its token holds it to servers
 * (serve.agent_servers). A deny or ask rule for a server therefore holds, for every other caller, whatever
 * server the request names, or none (docs/guides/serve.md, "Which server a request is for").
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { freshHome, startServe } from "./serve-fixture.js";

const POLICY = `version: "1"
default_action: allow
rules:
  - id: deny-payment-refunds
    match: { server: payments, tool: "refund_*" }
    action: deny
  - id: ask-payment-exports
    match: { server: payments, tool: "export_*" }
    action: ask
  - id: allow-docs
    match: { server: docs }
    action: allow
`;

async function decide(url: string, body: unknown): Promise<{ route: string; rule: string | null }> {
  const res = await fetch(`${url}/v1/decide`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  const answer = (await res.json()) as { route: string; decision: { rule: string | null } };
  return { route: answer.route, rule: answer.decision.rule };
}

describe("acp serve: a caller whose server is its own word", () => {
  it("meets a deny or ask rule for a server whatever server it names, or none", async () => {
    const home = freshHome();
    writeFileSync(join(home, "policy.yml"), POLICY);
    const serve = startServe(home, ["--port", "0"]);
    try {
      const { url } = await serve.ready;
      // the loopback caller without a token may name any server: naming another, or none, no longer skips it
      for (const server of ["payments", "docs", "anything", undefined]) {
        const named = server === undefined ? {} : { server };
        expect(await decide(url, { tool: "refund_order", arguments: {}, ...named })).toEqual({
          route: "refuse",
          rule: "policy:deny-payment-refunds",
        });
        expect(await decide(url, { tool: "export_ledger", arguments: {}, ...named })).toMatchObject({
          route: "ask",
          rule: "policy:ask-payment-exports",
        });
      }
      // what no deny or ask rule for a server touches is judged as before; an allow for a server keeps its server
      expect(await decide(url, { tool: "read_page", server: "docs", arguments: {} })).toMatchObject({
        route: "accept",
        rule: "policy:allow-docs",
      });
      expect(await decide(url, { tool: "read_page", arguments: {} })).toMatchObject({
        route: "accept",
        rule: "policy:default",
      });
    } finally {
      serve.stop();
      await serve.done;
    }
  });
});

/**
 * A person's edited arguments (`modifications`) holding a number beyond ±2^53−1: JSON parsing reads
 * `1234567890123456789` as 1234567890123456768, so the answer was recorded and signed with a value the person
 * never typed (and the edit's re-check then refused the call the person had just been told was approved).
 * Now the answer is refused 400 `unsafe_integer` naming the field, nothing is recorded, and the request keeps
 * waiting for an answer that sends the number as a string. Modifications the pipeline would refuse as
 * arguments for other reasons (nested 200,000 deep: a 500 from the answer's writers) are 400 `invalid_body`.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { APPROVER_TOKEN, at, eventually, openTokenServer, readJson, type TokenServer } from "./harness.js";

const AGENT = "agent-token-unsafe-0123456789";

let s: TokenServer;
beforeEach(async () => {
  s = await openTokenServer("consent-unsafe", { token: AGENT });
});
afterEach(async () => {
  await s.close();
});

const answer = (id: string, body: string): Promise<Response> =>
  fetch(`${s.url}/v1/consent/${id}/response`, {
    method: "POST",
    headers: { authorization: `Bearer ${APPROVER_TOKEN}`, "content-type": "application/json" },
    body,
  });

async function pendingId(): Promise<string> {
  return await eventually(async () => {
    const res = await fetch(`${s.url}/v1/consent`, { headers: { authorization: `Bearer ${AGENT}` } });
    const id = at(await readJson(res), "requests", 0, "id");
    return typeof id === "string" ? id : undefined;
  });
}

describe("POST /v1/consent/{id}/response with modifications the pipeline would refuse as arguments", () => {
  it("is refused naming the field, records nothing, and the number sent as a string is run", async () => {
    const waiting = s.post("/v1/decide?wait=true", AGENT, {
      tool: "send_email",
      arguments: { to: "a@example.com", thread: 1 },
    });
    const id = await pendingId();

    const big = await answer(
      id,
      '{"decision":"approved_with_modifications","modifications":{"to":"a@example.com","thread":1234567890123456789}}',
    );
    expect(big.status).toBe(400);
    const body = await readJson(big);
    expect(at(body, "error", "code")).toBe("unsafe_integer");
    expect(at(body, "error", "message")).toMatch(
      /^body\/modifications\.thread: a number beyond ±9007199254740991 .*send it as a string$/,
    );
    // inside an array, and as an exponent: the first such number, in document order
    const nested = await answer(
      id,
      '{"decision":"approved_with_modifications","modifications":{"to":"a@example.com","ids":[1,2,-1e20,3e300]}}',
    );
    expect(nested.status).toBe(400);
    expect(at(await readJson(nested), "error", "message")).toMatch(/^body\/modifications\.ids\.2: /);

    const view = await fetch(`${s.url}/v1/consent/${id}`, { headers: { authorization: `Bearer ${AGENT}` } });
    const seen = await readJson(view);
    expect(at(seen, "status")).toBe("pending");
    expect(at(seen, "answer")).toBe(null);

    const asString = await answer(
      id,
      '{"decision":"approved_with_modifications","modifications":{"to":"a@example.com","thread":"1234567890123456789"}}',
    );
    expect(asString.status).toBe(200);
    const decided = await readJson(await waiting);
    expect(at(decided, "route")).toBe("accept");
    expect(at(decided, "consent", "arguments")).toEqual({ to: "a@example.com", thread: "1234567890123456789" });
  });

  it("refuses modifications nested past 64 (400, not a 500 from the answer's writers) and keeps the request waiting", async () => {
    const waiting = s.post("/v1/decide?wait=true", AGENT, { tool: "send_email", arguments: { to: "a@example.com" } });
    const id = await pendingId();
    const deep = "[".repeat(200_000) + "]".repeat(200_000);
    const res = await answer(id, `{"decision":"approved_with_modifications","modifications":{"to":${deep}}}`);
    expect(res.status).toBe(400);
    const body = await readJson(res);
    expect(at(body, "error", "code")).toBe("invalid_body");
    expect(at(body, "error", "message")).toBe("body/modifications: arguments nest deeper than 64");
    const view = await fetch(`${s.url}/v1/consent/${id}`, { headers: { authorization: `Bearer ${AGENT}` } });
    expect(at(await readJson(view), "status")).toBe("pending");
    expect((await answer(id, '{"decision":"denied"}')).status).toBe(200);
    expect(at(await readJson(await waiting), "route")).toBe("refuse");
  });

  it("takes the largest exact integer as it is", async () => {
    const waiting = s.post("/v1/decide?wait=true", AGENT, { tool: "send_email", arguments: { to: "a@example.com" } });
    const id = await pendingId();
    const res = await answer(
      id,
      '{"decision":"approved_with_modifications","modifications":{"to":"a@example.com","n":9007199254740991,"m":-9007199254740991}}',
    );
    expect(res.status).toBe(200);
    expect(at(await readJson(await waiting), "consent", "arguments")).toEqual({
      to: "a@example.com",
      n: 9007199254740991,
      m: -9007199254740991,
    });
  });
});

describe("the other numbers the API takes, beyond ±2^53−1", () => {
  const raw = (path: string, body: string, accept = "application/json"): Promise<Response> =>
    fetch(`${s.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${AGENT}`, "content-type": "application/json", accept },
      body,
    });

  it("/pre-tool-check: in proposed_arguments, the event is invalid (contract_unsafe_integer) and refused", async () => {
    const event =
      '{"tool_name":"search_docs","tool_category":"public_read","authorization_state":"none","evidence_refs":[],' +
      '"risk_domain":"research","proposed_arguments":{"id":1234567890123456789},"recommended_route":"accept"}';
    const res = await raw("/pre-tool-check", event);
    expect(res.status).toBe(400);
    const envelope = await readJson(res);
    expect(at(envelope, "architecture_decision", "route")).toBe("refuse");
    expect(at(envelope, "validation_errors", 0, "code")).toBe("contract_unsafe_integer");
  });

  it("/mcp: a JSON-RPC id that large is no message (the SDK's parse error), never answered under a rounded id", async () => {
    const res = await raw(
      "/mcp",
      '{"jsonrpc":"2.0","id":1234567890123456789,"method":"tools/list"}',
      "application/json, text/event-stream",
    );
    expect(res.status).toBe(400);
    const body = await res.text();
    expect(body).toContain('"code":-32700');
    expect(body).not.toContain("1234567890123456");
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  at,
  rawRequest,
  READ_EVENT,
  readJson,
  startTestServer,
  WRITE_EVENT,
  type TestServer,
  tokenFor,
} from "./harness.js";

const TOKEN = "test-token-0123456789";
let s: TestServer;

beforeAll(async () => {
  s = await startTestServer({ token: TOKEN });
});
afterAll(async () => {
  await s.close();
});

async function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${s.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${tokenFor(path, TOKEN)}`, "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

async function get(path: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${s.url}${path}`, { headers: { authorization: `Bearer ${tokenFor(path, TOKEN)}`, ...headers } });
}

async function errorCode(res: Response): Promise<unknown> {
  return at(await readJson(res), "error", "code");
}

describe("POST /pre-tool-check", () => {
  it("accepts the document's public read and says the tool may execute", async () => {
    const res = await post("/pre-tool-check", READ_EVENT);
    expect(res.status).toBe(200);
    const body = await readJson(res);
    expect(body).toMatchObject({ gate_decision: "pass", architecture_decision: { route: "accept" } });
    expect(at(body, "decision", "decision_id")).toMatch(/^dc_[0-9a-f]{32}$/);
  });

  it("routes the document's write missing confirmation to ask", async () => {
    const res = await post("/pre-tool-check", WRITE_EVENT);
    expect(res.status).toBe(200);
    expect(await readJson(res)).toMatchObject({ gate_decision: "fail", architecture_decision: { route: "ask" } });
  });

  it("refuses a schema-invalid event with a refuse envelope under 400", async () => {
    const res = await post("/pre-tool-check", { ...READ_EVENT, tool_category: "telepathy" });
    expect(res.status).toBe(400);
    const body = await readJson(res);
    expect(body).toMatchObject({ recommended_action: "refuse", error: { code: "invalid_event" } });
    expect(at(body, "hard_blockers")).toContain("unknown_tool_category");
  });

  it("refuses an unknown field in the event", async () => {
    const res = await post("/pre-tool-check", { ...READ_EVENT, sneaky: true });
    expect(res.status).toBe(400);
    expect(await readJson(res)).toMatchObject({ gate_decision: "fail", recommended_action: "refuse" });
  });

  it("answers 401 for a wrong or missing token and 400 for a malformed header", async () => {
    const wrong = await post("/pre-tool-check", READ_EVENT, { authorization: "Bearer wrong-token" });
    expect(wrong.status).toBe(401);
    expect(await errorCode(wrong)).toBe("auth_token_wrong");
    const missing = await fetch(`${s.url}/pre-tool-check`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(READ_EVENT),
    });
    expect(missing.status).toBe(401);
    expect(await errorCode(missing)).toBe("auth_token_missing");
    const malformed = await post("/pre-tool-check", READ_EVENT, { authorization: "Basic dXNlcjpwYXNz" });
    expect(malformed.status).toBe(400);
    expect(await errorCode(malformed)).toBe("auth_header_malformed");
  });

  it("accepts the token only as `Bearer <token>` (the scheme in any case, RFC 9110 §11.1)", async () => {
    for (const authorization of [`Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(0, -1)}`]) {
      const res = await post("/pre-tool-check", READ_EVENT, { authorization });
      expect(res.status).toBe(401);
      expect(await errorCode(res)).toBe("auth_token_wrong");
    }
    for (const authorization of [`Bearer  ${TOKEN}`, `Bearer ${TOKEN} x`, `Bearer: ${TOKEN}`]) {
      const res = await post("/pre-tool-check", READ_EVENT, { authorization });
      expect(res.status).toBe(400);
      expect(await errorCode(res)).toBe("auth_header_malformed");
    }
    for (const scheme of ["Bearer", "bearer", "BEARER"]) {
      expect((await post("/pre-tool-check", READ_EVENT, { authorization: `${scheme} ${TOKEN}` })).status).toBe(200);
    }
    const wrong = await post("/pre-tool-check", READ_EVENT, { authorization: `bearer ${TOKEN}x` });
    expect(wrong.status).toBe(401);
  });

  it("answers 400 for malformed JSON, 415 for a wrong content type, 413 for an oversized body", async () => {
    const bad = await post("/pre-tool-check", "{not json");
    expect(bad.status).toBe(400);
    expect(await errorCode(bad)).toBe("malformed_json");
    const text = await post("/pre-tool-check", "tool_name=x", { "content-type": "text/plain" });
    expect(text.status).toBe(415);
    expect(await errorCode(text)).toBe("unsupported_media_type");
    const form = await post("/v1/decide", "tool=read_file", { "content-type": "application/x-www-form-urlencoded" });
    expect(form.status).toBe(415);
    const huge = { ...READ_EVENT, proposed_arguments: { blob: "x".repeat(2 * 1024 * 1024) } };
    const big = await post("/pre-tool-check", huge);
    expect(big.status).toBe(413);
    expect(await errorCode(big)).toBe("body_too_large");
  });

  it("sets a strict CSP that forbids framing on every answer", async () => {
    const res = await post("/pre-tool-check", READ_EVENT);
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
  });

  it("answers a decision with the same headers as every other JSON answer", async () => {
    const headersOf = (res: Response): Record<string, string> => {
      const out: Record<string, string> = {};
      res.headers.forEach((value, name) => {
        if (!["date", "content-length", "connection", "keep-alive"].includes(name)) out[name] = value;
      });
      return out;
    };
    const decided = await post("/pre-tool-check", READ_EVENT);
    expect(decided.status).toBe(200);
    const text = await decided.text();
    expect(decided.headers.get("content-length")).toBe(String(Buffer.byteLength(text)));
    const refused = await post("/pre-tool-check", { ...READ_EVENT, tool_category: "telepathy" });
    expect(refused.status).toBe(400);
    expect(headersOf(decided)).toEqual(headersOf(refused));
    expect(headersOf(decided)).toMatchObject({
      "content-type": "application/json; charset=utf-8",
      "cache-control": "no-store",
      "x-frame-options": "DENY",
      "x-content-type-options": "nosniff",
      "referrer-policy": "same-origin",
      "cross-origin-opener-policy": "same-origin",
    });
  });

  it("refuses requests addressed to a non-loopback host (DNS rebinding)", async () => {
    const res = await rawRequest(`${s.url}/pre-tool-check`, {
      method: "POST",
      headers: { host: "attacker.example", authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify(READ_EVENT),
    });
    expect(res.status).toBe(421);
    expect(at(JSON.parse(res.body), "error", "code")).toBe("host_not_allowed");
  });
});

describe("POST /v1/decide", () => {
  it("decides a read as accept and a payment as refuse with the deciding rule", async () => {
    const read = await post("/v1/decide", { tool: "read_file", arguments: { path: "/tmp/a" } });
    expect(read.status).toBe(200);
    expect(await readJson(read)).toMatchObject({ route: "accept" });
    const pay = await post("/v1/decide", { tool: "transfer_funds", arguments: { amount: 5 }, category: "financial" });
    expect(await readJson(pay)).toMatchObject({ route: "refuse", decision: { rule: "policy:refuse-financial" } });
  });

  it("rejects unknown fields and wrong types with a clear 400", async () => {
    const unknown = await post("/v1/decide", { tool: "read_file", arguments: {}, surprise: 1 });
    expect(unknown.status).toBe(400);
    const body = await readJson(unknown);
    expect(at(body, "error", "code")).toBe("unknown_field");
    expect(at(body, "error", "message")).toContain("surprise");
    const wrong = await post("/v1/decide", { tool: 42, arguments: {} });
    expect(wrong.status).toBe(400);
    expect(await errorCode(wrong)).toBe("invalid_body");
    const query = await post("/v1/decide?wait=maybe", { tool: "read_file", arguments: {} });
    expect(query.status).toBe(400);
    expect(await errorCode(query)).toBe("invalid_query");
  });

  it("records every decision in the audit chain, which verifies", async () => {
    await post("/v1/decide", { tool: "list_files", arguments: {}, agent: "audit-probe" });
    await s.stores.auditLog.flush();
    const page = await readJson(await get("/v1/audit?agent=audit-probe&limit=5"));
    expect(at(page, "events", "length")).toBe(1);
    expect(at(page, "events", 0, "event")).toMatchObject({ event_type: "policy_evaluated", decision: "accept" });
    const verify = await readJson(await get("/v1/audit/verify"));
    expect(verify).toMatchObject({ ok: true, problem: null });
    expect(at(verify, "count")).toBeGreaterThan(0);
    const badLimit = await get("/v1/audit?limit=0");
    expect(badLimit.status).toBe(400);
    expect((await get("/v1/audit?colour=red")).status).toBe(400);
  });
});

describe("consent over HTTP", () => {
  it("holds a call with wait=true until an answer arrives through the API", async () => {
    const waiting = post("/v1/decide?wait=true", {
      tool: "write_file",
      arguments: { path: "/tmp/x", api_token: "s3cret" },
    });
    let pending: unknown;
    while (pending === undefined) {
      pending = at(await readJson(await get("/v1/consent?status=pending")), "requests", 0);
      await new Promise((r) => setTimeout(r, 20));
    }
    const id = at(pending, "id") as string;
    expect(JSON.stringify(at(pending, "request"))).not.toContain("s3cret");
    expect(await readJson(await get(`/v1/consent/${id}`))).toMatchObject({ status: "pending" });
    const answer = await post(`/v1/consent/${id}/response`, { decision: "approved", scope: "once" });
    expect(answer.status).toBe(200);
    const done = await readJson(await waiting);
    expect(done).toMatchObject({
      route: "accept",
      consent: { outcome: "approved", arguments: { api_token: "s3cret" } },
    });
    const again = await post(`/v1/consent/${id}/response`, { decision: "denied" });
    expect(again.status).toBe(409);
    expect(await errorCode(again)).toBe("consent_request_already_decided");
  });

  it("answers 404 for an unknown id and 400 for a malformed one or a malformed answer", async () => {
    const unknown = await get(`/v1/consent/cr_${"0".repeat(32)}`);
    expect(unknown.status).toBe(404);
    expect(await errorCode(unknown)).toBe("consent_request_unknown");
    expect((await get("/v1/consent/not-an-id")).status).toBe(400);
    expect((await post(`/v1/consent/cr_${"0".repeat(32)}/response`, { decision: "maybe" })).status).toBe(400);
  });
});

describe("operations", () => {
  it("answers health, readiness and Prometheus metrics", async () => {
    expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${s.url}/readyz`)).status).toBe(200);
    const metrics = await (await get("/metrics")).text();
    expect(metrics).toMatch(/acp_decisions_total\{front_end="pre_tool_check",route="accept"\} [1-9]/);
    expect(metrics).toContain("acp_consent_pending 0");
    expect(metrics).toMatch(/acp_consent_latency_seconds_count\{outcome="approved"\} [1-9]/);
    expect(metrics).toMatch(/acp_http_errors_total\{status="401",code="auth_token_wrong"\} [1-9]/);
  });

  it("serves the OpenAPI document generated from the validating schemas", async () => {
    const doc = await readJson(await fetch(`${s.url}/openapi.json`));
    expect(doc).toMatchObject({ openapi: "3.1.0" });
    const body = (path: string): unknown =>
      at(doc, "paths", path, "post", "requestBody", "content", "application/json", "schema");
    expect(at(body("/v1/decide"), "additionalProperties")).toBe(false);
    expect(at(body("/pre-tool-check"), "required")).toContain("recommended_route");
    const ui = await fetch(`${s.url}/docs`, { redirect: "follow" });
    expect(ui.status).toBe(200);
  });

  it("answers 404 with the error body for an unknown route", async () => {
    const res = await get("/v2/nothing");
    expect(res.status).toBe(404);
    expect(await errorCode(res)).toBe("not_found");
  });
});

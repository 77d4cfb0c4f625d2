import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { READ_EVENT, readJson, startTestServer, WRITE_EVENT, type TestServer } from "./harness.js";

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
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

async function get(path: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${s.url}${path}`, { headers: { authorization: `Bearer ${TOKEN}`, ...headers } });
}

describe("POST /pre-tool-check", () => {
  it("accepts the document's public read and says the tool may execute", async () => {
    const res = await post("/pre-tool-check", READ_EVENT);
    expect(res.status).toBe(200);
    const body = await readJson(res);
    expect(body["gate_decision"]).toBe("pass");
    expect(body["architecture_decision"].route).toBe("accept");
    expect(body["decision"].decision_id).toMatch(/^dc_[0-9a-f]{32}$/);
  });

  it("routes the document's write missing confirmation to ask", async () => {
    const res = await post("/pre-tool-check", WRITE_EVENT);
    const body = await readJson(res);
    expect(res.status).toBe(200);
    expect(body["architecture_decision"].route).toBe("ask");
    expect(body["gate_decision"]).toBe("fail");
  });

  it("refuses a schema-invalid event with a refuse envelope under 400", async () => {
    const res = await post("/pre-tool-check", { ...READ_EVENT, tool_category: "telepathy" });
    expect(res.status).toBe(400);
    const body = await readJson(res);
    expect(body["recommended_action"]).toBe("refuse");
    expect(body["hard_blockers"]).toContain("unknown_tool_category");
    expect(body["error"].code).toBe("invalid_event");
  });

  it("refuses an unknown field in the event", async () => {
    const res = await post("/pre-tool-check", { ...READ_EVENT, sneaky: true });
    expect(res.status).toBe(400);
    expect((await readJson(res))["gate_decision"]).toBe("fail");
  });

  it("answers 401 for a wrong or missing token and 400 for a malformed header", async () => {
    expect((await post("/pre-tool-check", READ_EVENT, { authorization: "Bearer wrong-token" })).status).toBe(401);
    const missing = await fetch(`${s.url}/pre-tool-check`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(READ_EVENT),
    });
    expect(missing.status).toBe(401);
    expect((await readJson(missing))["error"].code).toBe("auth_token_missing");
    const malformed = await post("/pre-tool-check", READ_EVENT, { authorization: "Basic dXNlcjpwYXNz" });
    expect(malformed.status).toBe(400);
    expect((await readJson(malformed))["error"].code).toBe("auth_header_malformed");
  });

  it("answers 400 for malformed JSON, 415 for a wrong content type, 413 for an oversized body", async () => {
    const bad = await post("/pre-tool-check", "{not json");
    expect(bad.status).toBe(400);
    expect((await readJson(bad))["error"].code).toBe("malformed_json");
    const text = await post("/pre-tool-check", "tool_name=x", { "content-type": "text/plain" });
    expect(text.status).toBe(415);
    expect((await readJson(text))["error"].code).toBe("unsupported_media_type");
    const form = await post("/v1/decide", "tool=read_file", { "content-type": "application/x-www-form-urlencoded" });
    expect(form.status).toBe(415);
    const huge = { ...READ_EVENT, proposed_arguments: { blob: "x".repeat(2 * 1024 * 1024) } };
    const big = await post("/pre-tool-check", huge);
    expect(big.status).toBe(413);
    expect((await readJson(big))["error"].code).toBe("body_too_large");
  });

  it("sets a strict CSP that forbids framing on every answer", async () => {
    const res = await post("/pre-tool-check", READ_EVENT);
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
  });
});

describe("POST /v1/decide", () => {
  it("decides a read as accept and a payment as refuse with the deciding rule", async () => {
    const read = await post("/v1/decide", { tool: "read_file", arguments: { path: "/tmp/a" } });
    expect(read.status).toBe(200);
    expect((await readJson(read))["route"]).toBe("accept");
    const pay = await post("/v1/decide", { tool: "transfer_funds", arguments: { amount: 5 }, category: "financial" });
    const body = await readJson(pay);
    expect(body["route"]).toBe("refuse");
    expect(body["decision"].rule).toBe("policy:refuse-financial");
  });

  it("rejects unknown fields and wrong types with a clear 400", async () => {
    const unknown = await post("/v1/decide", { tool: "read_file", arguments: {}, surprise: 1 });
    expect(unknown.status).toBe(400);
    const err = (await readJson(unknown))["error"];
    expect(err.code).toBe("unknown_field");
    expect(err.message).toContain("surprise");
    const wrong = await post("/v1/decide", { tool: 42, arguments: {} });
    expect(wrong.status).toBe(400);
    expect((await readJson(wrong))["error"].code).toBe("invalid_body");
    const query = await post("/v1/decide?wait=maybe", { tool: "read_file", arguments: {} });
    expect(query.status).toBe(400);
    expect((await readJson(query))["error"].code).toBe("invalid_query");
  });

  it("records every decision in the audit chain, which verifies", async () => {
    await post("/v1/decide", { tool: "list_files", arguments: {}, agent: "audit-probe" });
    await s.auditLog.flush();
    const res = await get("/v1/audit?agent=audit-probe&limit=5");
    const page = await readJson(res);
    expect(page["events"].length).toBe(1);
    expect(page["events"][0].event.event_type).toBe("policy_evaluated");
    expect(page["events"][0].event.decision).toBe("accept");
    const verify = await readJson(await get("/v1/audit/verify"));
    expect(verify["ok"]).toBe(true);
    expect(verify["count"]).toBeGreaterThan(0);
  });
});

describe("consent over HTTP", () => {
  it("holds a call with wait=true until an answer arrives through the API", async () => {
    const waiting = post("/v1/decide?wait=true", {
      tool: "write_file",
      arguments: { path: "/tmp/x", api_token: "s3cret" },
    });
    const pending = await (async () => {
      for (;;) {
        const list = await readJson(await get("/v1/consent?status=pending"));
        if (list["requests"].length > 0) return list["requests"][0];
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const id = pending["id"] as unknown as string;
    expect(JSON.stringify(pending["request"])).not.toContain("s3cret");
    const one = await readJson(await get(`/v1/consent/${id}`));
    expect(one["status"]).toBe("pending");
    const answer = await post(`/v1/consent/${id}/response`, { decision: "approved", scope: "once" });
    expect(answer.status).toBe(200);
    const done = await readJson(await waiting);
    expect(done["route"]).toBe("accept");
    expect(done["consent"].outcome).toBe("approved");
    expect(done["consent"].arguments.api_token).toBe("s3cret");
    const again = await post(`/v1/consent/${id}/response`, { decision: "denied" });
    expect(again.status).toBe(409);
    expect((await readJson(again))["error"].code).toBe("consent_request_already_decided");
  });

  it("answers 404 for an unknown id and 400 for a malformed one", async () => {
    const unknown = await get(`/v1/consent/cr_${"0".repeat(32)}`);
    expect(unknown.status).toBe(404);
    expect((await get("/v1/consent/not-an-id")).status).toBe(400);
    const bad = await post(`/v1/consent/cr_${"0".repeat(32)}/response`, { decision: "maybe" });
    expect(bad.status).toBe(400);
  });
});

describe("operations", () => {
  it("answers health, readiness and Prometheus metrics", async () => {
    expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${s.url}/readyz`)).status).toBe(200);
    const metrics = await (await get("/metrics")).text();
    expect(metrics).toMatch(/acp_decisions_total\{front_end="pre_tool_check",route="accept"\} [1-9]/);
    expect(metrics).toContain("acp_consent_pending 0");
    expect(metrics).toMatch(/acp_http_errors_total\{status="401",code="auth_token_wrong"\} [1-9]/);
  });

  it("serves the OpenAPI document generated from the validating schemas", async () => {
    const doc = await readJson(await fetch(`${s.url}/openapi.json`));
    expect(doc["openapi"]).toBe("3.1.0");
    const decide = doc["paths"]["/v1/decide"].post;
    expect(decide.requestBody.content["application/json"].schema.additionalProperties).toBe(false);
    expect(doc["paths"]["/pre-tool-check"].post.requestBody.content["application/json"].schema.required).toContain(
      "recommended_route",
    );
    const ui = await fetch(`${s.url}/docs`, { redirect: "follow" });
    expect(ui.status).toBe(200);
  });

  it("answers 404 with the error body for an unknown route", async () => {
    const res = await get("/v2/nothing");
    expect(res.status).toBe(404);
    expect((await readJson(res))["error"].code).toBe("not_found");
  });
});

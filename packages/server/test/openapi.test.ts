/**
 * The OpenAPI document describes every route a client calls, with what it sends and what comes back,
 * and the real answers match the schemas the document shows.
 */
import Fastify from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  at,
  eventually,
  rawRequest,
  READ_EVENT,
  readJson,
  startTestServer,
  type Json,
  type TestServer,
  tokenFor,
} from "./harness.js";

const TOKEN = "test-token-0123456789";
let s: TestServer;
let doc: Json;

beforeAll(async () => {
  s = await startTestServer({ token: TOKEN });
  doc = await readJson(await fetch(`${s.url}/openapi.json`));
});
afterAll(async () => {
  await s.close();
});

function call(method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${s.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${tokenFor(path, TOKEN)}`,
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
}

/** The schema the document shows for a route's answer with `status` (200 unless told). */
function answerSchema(method: string, path: string, status = "200"): Json {
  return at(doc, "paths", path, method, "responses", status, "content", "application/json", "schema");
}

/** Every operation of the document, as `[method, path]`. */
function operations(): [string, string][] {
  const paths = at(doc, "paths") as Record<string, Record<string, unknown>>;
  return Object.entries(paths).flatMap(([path, methods]) =>
    Object.keys(methods).map((m): [string, string] => [m, path]),
  );
}

/**
 * Validates answers against the document's schemas with the validator Fastify itself uses (Ajv 8 with
 * formats), set to neither coerce nor strip: a value that does not match is reported, never repaired.
 */
async function validateAnswers(answers: readonly [string, Json][]): Promise<Record<string, string>> {
  // a route is `method path`, or `method path status` for an answer other than 200
  const checker = Fastify({
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: false } },
  });
  answers.forEach(([route], n) => {
    const [method = "", path = "", status = "200"] = route.split(" ");
    const schema = answerSchema(method, path, status);
    checker.post(`/check/${n}`, { schema: { body: schema ?? { not: {} } } }, () => ({ ok: true }));
  });
  const problems: Record<string, string> = {};
  for (const [n, [route, answer]] of answers.entries()) {
    const res = await checker.inject({ method: "POST", url: `/check/${n}`, payload: answer as object });
    if (res.statusCode !== 200) problems[`${route} #${n}`] = res.body;
  }
  await checker.close();
  return problems;
}

describe("the OpenAPI document", () => {
  it("describes the answer of every route, and the body of every route that takes one", () => {
    const paths = at(doc, "paths") as Record<string, Record<string, Record<string, unknown>>>;
    const missing: string[] = [];
    for (const [path, methods] of Object.entries(paths)) {
      for (const [method, op] of Object.entries(methods)) {
        const ok = at(op, "responses", "200", "content");
        if (typeof ok !== "object" || ok === null) missing.push(`${method} ${path}: no 200 answer schema`);
        if (method === "post" && !path.endsWith("/complete") && at(op, "requestBody") === undefined) {
          missing.push(`${method} ${path}: no request body`);
        }
      }
    }
    expect(missing).toEqual([]);
    expect(Object.keys(paths)).toEqual(
      expect.arrayContaining([
        "/pre-tool-check",
        "/v1/decide",
        "/v1/consent",
        "/v1/consent/{id}",
        "/v1/consent/{id}/response",
        "/v1/consent/{id}/complete",
        "/v1/consent/events",
        "/v1/audit",
        "/v1/audit/verify",
        "/healthz",
        "/readyz",
        "/metrics",
        "/mcp",
      ]) as unknown,
    );
  });

  it("declares on every operation the answers every route gives: Host, Origin, a refused body, an internal error", () => {
    const missing: string[] = [];
    for (const [method, path] of operations()) {
      const codes: Record<string, string> = {
        "403": "origin_not_allowed",
        "421": "host_not_allowed",
        "500": "internal_error",
      };
      if (method !== "get") Object.assign(codes, { "413": "body_too_large", "415": "unsupported_media_type" });
      for (const [status, code] of Object.entries(codes)) {
        const schema = answerSchema(method, path, status);
        const description = at(doc, "paths", path, method, "responses", status, "description");
        const enumOf = at(schema, "properties", "error", "properties", "code", "enum");
        if (!Array.isArray(enumOf) || !enumOf.includes(code) || typeof description !== "string")
          missing.push(`${method} ${path} ${status}: no error body`);
        else if (!description.includes(code)) missing.push(`${method} ${path} ${status}: ${description}`);
      }
    }
    expect(operations().length).toBeGreaterThanOrEqual(13);
    expect(missing).toEqual([]);
    // a route's own 403 keeps its meaning, and says the Origin check's as well
    const answer = at(doc, "paths", "/v1/consent/{id}/response", "post", "responses", "403", "description");
    expect(answer).toEqual(expect.stringContaining("approver_token_required"));
    expect(answer).toEqual(expect.stringContaining("origin_not_allowed"));
  });

  it("shows what a foreign Host or Origin, another content type and a body too large get, on every operation", async () => {
    const answers: [string, Json][] = [];
    const unexpected: string[] = [];
    const keep = (route: string, want: number, got: { status: number; body: string }): void => {
      if (got.status !== want) unexpected.push(`${route}: ${got.status} ${got.body.slice(0, 120)}`);
      else answers.push([`${route} ${want}`, JSON.parse(got.body) as Json]);
    };
    for (const [method, path] of operations()) {
      const url = `${s.url}${path.replace("{id}", "0123456789abcdef")}`;
      const route = `${method} ${path}`;
      const headers = { authorization: `Bearer ${tokenFor(path, TOKEN)}`, accept: "application/json" };
      const M = method.toUpperCase();
      keep(route, 421, await rawRequest(url, { method: M, headers: { ...headers, host: "evil.example" } }));
      keep(route, 403, await rawRequest(url, { method: M, headers: { ...headers, origin: "https://evil.example" } }));
      if (method === "get") continue;
      const send = async (type: string, body: string): Promise<{ status: number; body: string }> => {
        const res = await fetch(url, { method: M, headers: { ...headers, "content-type": type }, body });
        return { status: res.status, body: await res.text() };
      };
      keep(route, 415, await send("text/plain", "{}"));
      keep(route, 413, await send("application/json", JSON.stringify({ pad: "x".repeat(1024 * 1024) })));
    }
    expect(unexpected).toEqual([]);
    expect(answers.length).toBeGreaterThanOrEqual(13 * 2 + 5 * 2);
    expect(await validateAnswers(answers)).toEqual({});
  });

  it("declares what the MCP SDK answers on /mcp: a batch, a notification, a parse error, an Accept without SSE", async () => {
    const mcp = async (accept: string, body: unknown): Promise<{ status: number; text: string }> => {
      const res = await fetch(`${s.url}/mcp`, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json", accept },
        body: JSON.stringify(body),
      });
      return { status: res.status, text: await res.text() };
    };
    const both = "application/json, text/event-stream";
    const list = { jsonrpc: "2.0", id: 1, method: "tools/list" };
    const answers: [string, Json][] = [];
    const got: number[] = [];
    for (const [accept, body] of [
      ["application/json", list],
      [both, {}],
      [both, [list]],
    ] as const) {
      const { status, text } = await mcp(accept, body);
      got.push(status);
      answers.push([`post /mcp ${status}`, JSON.parse(text) as Json]);
    }
    expect(got).toEqual([406, 400, 200]);
    expect(await validateAnswers(answers)).toEqual({});
    const notified = await mcp(both, { jsonrpc: "2.0", method: "notifications/initialized" });
    expect([notified.status, notified.text]).toEqual([202, ""]);
    const accepted = at(doc, "paths", "/mcp", "post", "responses", "202") as Record<string, unknown>;
    expect(accepted).toBeDefined();
    expect(accepted).not.toHaveProperty("content");
  });

  it("declares Retry-After wherever the API sends it", () => {
    const header = (method: string, path: string, status: string): unknown =>
      at(doc, "paths", path, method, "responses", status, "headers", "Retry-After", "schema");
    const declared = [
      ["post", "/v1/decide", "200"], // a refusal only waiting lifts (rate_limited, caller_budget_exhausted)
      ["post", "/v1/decide", "429"], // consent_queue_full, no turn found in time
      ["post", "/v1/decide", "503"], // state_unavailable; audit_unavailable on PostgreSQL
      ["post", "/pre-tool-check", "200"],
      ["post", "/pre-tool-check", "503"],
      ["get", "/v1/consent/events", "429"], // too many open event streams
      ["get", "/v1/consent", "503"],
      ["get", "/readyz", "503"], // PostgreSQL not ready
    ] as const;
    for (const [method, path, status] of declared)
      expect([method, path, status, header(method, path, status)]).toEqual([
        method,
        path,
        status,
        { type: "integer", minimum: 1 },
      ]);
    // the header is no part of the body's schema, and the error body is still described
    expect(at(doc, "paths", "/readyz", "get", "responses", "503", "content", "application/json", "schema")).toEqual(
      expect.objectContaining({ required: ["error"] }),
    );
    expect(answerSchema("post", "/v1/decide")).not.toHaveProperty("headers");
  });

  it("shows schemas the real answers match", async () => {
    const answers: [string, Json][] = [];
    const keep = async (route: string, res: Response | Promise<Response>): Promise<Json> => {
      const answer = await readJson(await res);
      answers.push([route, answer]);
      return answer;
    };
    await keep("post /pre-tool-check", call("POST", "/pre-tool-check", READ_EVENT));
    await keep("post /v1/decide", call("POST", "/v1/decide", { tool: "read_file", arguments: { path: "/x" } }));
    const waiting = call("POST", "/v1/decide?wait=true", { tool: "write_file", arguments: { path: "/y" } });
    const id = await eventually(async () => {
      const list = await readJson(await call("GET", "/v1/consent?status=pending"));
      return at(list, "requests", 0, "id") as string | undefined;
    });
    await keep("get /v1/consent", call("GET", "/v1/consent?status=pending"));
    await keep("get /v1/consent/{id}", call("GET", `/v1/consent/${id}`));
    await keep(
      "post /v1/consent/{id}/response",
      call("POST", `/v1/consent/${id}/response`, {
        decision: "approved_with_modifications",
        modifications: { path: "/z" },
        scope: { for: "10m" },
      }),
    );
    await keep("post /v1/decide", waiting);
    await keep("get /v1/audit", call("GET", "/v1/audit?limit=3"));
    await keep("get /v1/audit/verify", call("GET", "/v1/audit/verify"));
    await keep("get /healthz", call("GET", "/healthz"));
    await keep("get /readyz", call("GET", "/readyz"));
    expect(at(answers[5]?.[1], "consent", "outcome")).toBe("approved");
    expect(await validateAnswers(answers)).toEqual({});
    // and the check is not vacuous: answers that differ from the schemas are reported
    const wrong = await validateAnswers([
      ["get /healthz", { status: "down" }],
      ["get /v1/audit", { events: [], total: 0, next: null, extra: true }],
    ]);
    expect(Object.keys(wrong)).toHaveLength(2);
  });
});

describe("the OpenAPI UI at /docs", () => {
  it("may not be framed and loads nothing from a third party", async () => {
    for (const path of ["/docs/", "/docs/static/index.html"]) {
      const res = await fetch(`${s.url}${path}`, { redirect: "manual" });
      const csp = res.headers.get("content-security-policy") ?? "";
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain("validator.swagger.io");
    }
    const init = await (await fetch(`${s.url}/docs/static/swagger-initializer.js`)).text();
    expect(init).toContain("validatorUrl: null");
  });
});

/**
 * A path of the API asked with a method it does not take answers 405 with `Allow` and the error body,
 * not 404; the OpenAPI document lists only the methods each path takes.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { at, readJson, startTestServer, type TestServer, tokenFor } from "./harness.js";

const TOKEN = "test-token-0123456789";
const CONSENT_ID = `cr_${"0".repeat(32)}`;
let s: TestServer;

beforeAll(async () => {
  s = await startTestServer({ token: TOKEN });
});
afterAll(async () => {
  await s.close();
});

function call(method: string, path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${s.url}${path}`, {
    method,
    ...init,
    headers: {
      authorization: `Bearer ${tokenFor(path, TOKEN)}`,
      ...(init.headers as Record<string, string> | undefined),
    },
  });
}

describe("a method a path does not take", () => {
  it("GET /pre-tool-check is 405 with Allow: POST and the error body, not 404", async () => {
    const res = await call("GET", "/pre-tool-check");
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST");
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(await readJson(res)).toEqual({
      error: { code: "method_not_allowed", message: "no route `GET /pre-tool-check`: that path takes POST" },
    });
  });

  it("every other method on the POST-only routes is 405 naming POST", async () => {
    const paths = [
      "/pre-tool-check",
      "/v1/decide",
      `/v1/consent/${CONSENT_ID}/response`,
      `/v1/consent/${CONSENT_ID}/complete`,
      "/mcp",
    ];
    const answers: string[] = [];
    for (const path of paths) {
      for (const method of ["GET", "HEAD", "PUT", "PATCH", "DELETE", "OPTIONS"]) {
        // /mcp answers these itself, after the token: a stateless endpoint keeps no stream
        const res = await call(method, `${path}?wait=true`);
        answers.push(`${method} ${path} ${res.status} ${res.headers.get("allow")}`);
        if (method !== "HEAD") expect(at(await readJson(res), "error", "code")).toBe("method_not_allowed");
      }
    }
    expect(answers).toEqual(
      paths.flatMap((path) =>
        ["GET", "HEAD", "PUT", "PATCH", "DELETE", "OPTIONS"].map((method) => `${method} ${path} 405 POST`),
      ),
    );
  });

  it("a GET-only route names GET and HEAD", async () => {
    for (const path of ["/v1/audit", "/v1/consent", `/v1/consent/${CONSENT_ID}`, "/healthz", "/metrics"]) {
      const res = await call("POST", path, { headers: { "content-type": "application/json" }, body: "{}" });
      expect([path, res.status, res.headers.get("allow")]).toEqual([path, 405, "GET, HEAD"]);
    }
  });

  it("is answered before the token or the body is looked at: the method is wrong whoever asks", async () => {
    const anyone = await fetch(`${s.url}/v1/decide`, { method: "PUT" });
    expect(anyone.status).toBe(405);
    const badBody = await call("PUT", "/v1/decide", {
      headers: { "content-type": "text/plain" },
      body: "x".repeat(2 * 1024 * 1024),
    });
    expect(badBody.status).toBe(405);
    expect(at(await readJson(badBody), "error", "code")).toBe("method_not_allowed");
    // the right method still checks the token, and a path that does not exist is still 404
    expect((await fetch(`${s.url}/v1/decide`, { method: "POST" })).status).toBe(401);
    expect((await call("GET", "/v1/nothing")).status).toBe(404);
    expect((await call("GET", "/v1/decide/extra")).status).toBe(404);
  });

  it("on /mcp checks the token first for every method: without it 401, with it 405 naming POST", async () => {
    const methods = ["GET", "HEAD", "PUT", "PATCH", "DELETE", "OPTIONS"];
    const anyone: string[] = [];
    const wrong: string[] = [];
    const holder: string[] = [];
    for (const method of methods) {
      const bare = await fetch(`${s.url}/mcp`, { method });
      anyone.push(`${method} ${bare.status} ${bare.headers.get("allow")} ${bare.headers.get("www-authenticate")}`);
      const guessed = await fetch(`${s.url}/mcp`, {
        method,
        headers: { authorization: "Bearer not-the-token-at-all" },
      });
      wrong.push(`${method} ${guessed.status} ${guessed.headers.get("allow")}`);
      // with the token, the body is never read: a 2 MiB text body is still a 405, not 413 or 415
      const held = await call(method, "/mcp", {
        headers: { "content-type": "text/plain" },
        ...(method === "GET" || method === "HEAD" ? {} : { body: "x".repeat(2 * 1024 * 1024) }),
      });
      holder.push(`${method} ${held.status} ${held.headers.get("allow")}`);
      if (method !== "HEAD") expect(at(await readJson(held), "error", "code")).toBe("method_not_allowed");
    }
    expect(anyone).toEqual(methods.map((m) => `${m} 401 null Bearer realm="acp"`));
    expect(wrong).toEqual(methods.map((m) => `${m} 401 null`));
    expect(holder).toEqual(methods.map((m) => `${m} 405 POST`));
  });

  it("is counted in /metrics as a 405 method_not_allowed", async () => {
    await call("GET", "/v1/decide");
    const metrics = await (await call("GET", "/metrics")).text();
    expect(metrics).toMatch(/status="405"[^}]*code="method_not_allowed"|code="method_not_allowed"[^}]*status="405"/);
  });

  it("leaves the OpenAPI document listing only the methods each path takes", async () => {
    const doc = await readJson(await fetch(`${s.url}/openapi.json`));
    const paths = at(doc, "paths") as Record<string, Record<string, unknown>>;
    const methods = Object.fromEntries(Object.entries(paths).map(([path, ops]) => [path, Object.keys(ops).sort()]));
    expect(methods).toMatchObject({
      "/pre-tool-check": ["post"],
      "/v1/decide": ["post"],
      "/v1/consent/{id}/response": ["post"],
      "/v1/consent/{id}/complete": ["post"],
      "/v1/consent": ["get"],
      "/v1/audit": ["get"],
      "/mcp": ["post"],
    });
    expect(JSON.stringify(doc)).not.toContain('"405"');
  });
});

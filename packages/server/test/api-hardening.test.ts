/**
 * Gaps found by using `acp serve` as a platform team and a security reviewer would: answers the API
 * accepted but the waiting call could not use, and requests the API judged differently from what a
 * client meant.
 */
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { at, eventually, readJson, startTestServer, type TestServer, tokenFor } from "./harness.js";

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

async function get(path: string): Promise<Response> {
  return fetch(`${s.url}${path}`, { headers: { authorization: `Bearer ${tokenFor(path, TOKEN)}` } });
}

async function errorOf(res: Response): Promise<{ code: unknown; message: unknown }> {
  const body = await readJson(res);
  return { code: at(body, "error", "code"), message: at(body, "error", "message") };
}

/** Raises a consent request with a waiting call; returns its id and the call. */
async function waitingCall(n: number): Promise<{ id: string; call: Promise<Response> }> {
  const call = post("/v1/decide?wait=true", { tool: "write_file", arguments: { path: `/tmp/${n}` } });
  const id = await eventually(async () => {
    const list = await readJson(await get("/v1/consent?status=pending"));
    const found = (at(list, "requests") as { id: string; request: { action: { parameters: unknown } } }[]).find((r) =>
      JSON.stringify(r.request.action.parameters).includes(`/tmp/${n}`),
    );
    return found?.id;
  });
  return { id, call };
}

describe("consent answers the waiting call cannot use are refused, nothing recorded", () => {
  it("refuses an approval window that has already ended or is longer than seven days", async () => {
    const { id, call } = await waitingCall(1);
    const past = await post(`/v1/consent/${id}/response`, {
      decision: "approved",
      scope: { until: "2020-01-01T00:00:00Z" },
    });
    expect(past.status).toBe(400);
    const pastError = await errorOf(past);
    expect(pastError.code).toBe("invalid_body");
    expect(String(pastError.message)).toContain("already ended");
    const far = new Date(Date.now() + 30 * 86_400_000).toISOString();
    const tooLong = await post(`/v1/consent/${id}/response`, { decision: "approved", scope: { until: far } });
    expect(tooLong.status).toBe(400);
    const longError = await errorOf(tooLong);
    expect(longError.code).toBe("invalid_body");
    expect(String(longError.message)).toContain("longer than seven days");
    // nothing was recorded: the request still waits, and a good answer reaches the call as given
    expect(at(await readJson(await get(`/v1/consent/${id}`)), "status")).toBe("pending");
    const until = new Date(Date.now() + 3_600_000).toISOString();
    const ok = await post(`/v1/consent/${id}/response`, { decision: "approved", scope: { until } });
    expect(ok.status).toBe(200);
    expect(await readJson(await call)).toMatchObject({ route: "accept", consent: { outcome: "approved" } });
  });
});

describe("a denial that carries edited arguments is refused, nothing recorded", () => {
  it("answers 400 to denied with modifications (the message says they go only with approved_with_modifications)", async () => {
    const { id, call } = await waitingCall(2);
    const res = await post(`/v1/consent/${id}/response`, { decision: "denied", modifications: { path: "/etc" } });
    expect(res.status).toBe(400);
    expect(await errorOf(res)).toMatchObject({ code: "invalid_body" });
    expect(at(await readJson(await get(`/v1/consent/${id}`)), "status")).toBe("pending");
    expect((await post(`/v1/consent/${id}/response`, { decision: "denied", reason: "no" })).status).toBe(200);
    expect(await readJson(await call)).toMatchObject({ route: "refuse", consent: { outcome: "denied" } });
  });
});

describe("a body whose meaning depends on the JSON parser is refused", () => {
  const READ = {
    tool_name: "search_docs",
    tool_category: "public_read",
    authorization_state: "none",
    evidence_refs: [],
    risk_domain: "research",
    proposed_arguments: { q: "x" },
    recommended_route: "accept",
  };
  /** The read event's text with `field` written twice: first `first`, then the event's own value. */
  function twice(field: string, first: string): string {
    return JSON.stringify(READ).replace("{", `{"${field}":${JSON.stringify(first)},`);
  }

  it("refuses a key given twice in /pre-tool-check and /v1/decide (before: the last one was decided)", async () => {
    const check = await post("/pre-tool-check", twice("tool_category", "write"));
    expect(check.status).toBe(400);
    const error = await errorOf(check);
    expect(error.code).toBe("malformed_json");
    expect(String(error.message)).toContain('"tool_category" appears twice');
    const decide = await post("/v1/decide", '{"tool":"delete_everything","arguments":{},"tool":"read_file"}');
    expect(decide.status).toBe(400);
    expect((await errorOf(decide)).code).toBe("malformed_json");
    // also when one of the two is written with escapes, and inside nested objects
    const escaped = await post("/v1/decide", '{"tool":"read_file","arguments":{"path":"/a","p\\u0061th":"/etc"}}');
    expect(escaped.status).toBe(400);
    expect(String((await errorOf(escaped)).message)).toContain('"path" appears twice');
  });

  it("still accepts equal keys in different objects, and JSON with a charset or a byte order mark", async () => {
    const res = await post(
      "/v1/decide",
      '\ufeff{"tool":"read_file","arguments":{"a":{"tool":"x"},"b":[{"tool":"y"},{"tool":"z"}],"s":"\\"tool\\":1,"}}',
      { "content-type": "application/json; charset=utf-8" },
    );
    expect(res.status).toBe(200);
    expect(at(await readJson(res), "route")).toBe("accept");
  });

  it("refuses a body whose bytes are not UTF-8 (before: each bad byte was decided as U+FFFD)", async () => {
    const text = JSON.stringify({ tool: "read_file", arguments: { path: "/etc/pass?wd" } });
    const at_ = text.indexOf("?");
    for (const bad of [[0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82]]) {
      const body = Buffer.concat([Buffer.from(text.slice(0, at_)), Buffer.from(bad), Buffer.from(text.slice(at_ + 1))]);
      for (const path of ["/v1/decide", "/mcp"]) {
        const res = await fetch(`${s.url}${path}`, {
          method: "POST",
          headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
          body,
        });
        const error = await errorOf(res);
        expect({ bad, path, status: res.status, code: error.code }).toEqual({
          bad,
          path,
          status: 400,
          code: "malformed_json",
        });
        expect(String(error.message)).toContain("UTF-8");
      }
    }
    // the same text in UTF-8 (a character of several bytes) is decided
    const good = await post("/v1/decide", text.replace("?", "\u00e9\u2028\ud83d\ude00"));
    expect(good.status).toBe(200);
  });

  it("refuses __proto__ and constructor.prototype keys with a message that says so", async () => {
    for (const body of [
      '{"tool":"read_file","arguments":{"__proto__":{"admin":true}}}',
      '{"tool":"read_file","arguments":{"constructor":{"prototype":{"admin":true}}}}',
    ]) {
      const res = await post("/v1/decide", body);
      expect(res.status).toBe(400);
      const error = await errorOf(res);
      expect(error.code).toBe("malformed_json");
      expect(String(error.message)).toMatch(/`(__proto__|prototype)`/);
    }
  });

  it("keeps the empty-body and invalid-JSON answers", async () => {
    const empty = await post("/pre-tool-check", "");
    expect(empty.status).toBe(400);
    expect(await errorOf(empty)).toMatchObject({ code: "malformed_json" });
    const bad = await post("/pre-tool-check", '{"tool_name":');
    expect(bad.status).toBe(400);
    expect(await errorOf(bad)).toEqual({ code: "malformed_json", message: "the body is not valid JSON" });
  });
});

/** Writes raw bytes on a new connection; resolves with everything the server sent before closing. */
function rawExchange(url: string, bytes: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    let got = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (got += chunk));
    socket.on("close", () => resolve(got));
    socket.on("error", reject);
  });
}

describe("every error has the documented body, also before routing", () => {
  it("answers a malformed percent-encoding and an over-long path parameter with the error body", async () => {
    const bad = await get("/v1/consent/%zz");
    expect(bad.status).toBe(400);
    expect(await readJson(bad)).toMatchObject({ error: { code: "bad_request" } });
    expect(bad.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    const long = await get(`/v1/consent/cr_${"a".repeat(300)}`);
    expect(long.status).toBe(400);
    expect(await readJson(long)).toMatchObject({ error: { code: "invalid_query" } });
  });

  it("answers a request the HTTP parser refuses, and one with huge headers, with the error body", async () => {
    const garbage = await rawExchange(s.url, "NOT-HTTP\r\n\r\n");
    expect(garbage).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(garbage.slice(garbage.indexOf("\r\n\r\n") + 4))).toMatchObject({
      error: { code: "bad_request", message: "malformed HTTP request" },
    });
    const huge = await rawExchange(
      s.url,
      `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${"a".repeat(70_000)}\r\n\r\n`,
    );
    expect(huge).toMatch(/^HTTP\/1\.1 431 /);
    expect(huge).toContain('"code":"bad_request"');
    const metrics = await (await get("/metrics")).text();
    expect(metrics).toMatch(/acp_http_errors_total\{status="431",code="bad_request"\} [1-9]/);
  });

  it("cuts a client that sends part of its headers and stalls, with a 408 error body", async () => {
    const stalled = await rawExchange(s.url, "POST /pre-tool-check HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    expect(stalled).toMatch(/^HTTP\/1\.1 408 /);
    expect(stalled).toContain('"code":"bad_request"');
    expect(stalled).toContain("did not arrive in time");
  }, 90_000);
});

describe("a caller without the token learns nothing about its body", () => {
  /** A request without the bearer token. */
  function anonymous(path: string, body: string, headers: Record<string, string> = {}): Promise<Response> {
    return fetch(`${s.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body,
    });
  }

  it("answers 401 before the body is read, parsed or validated", async () => {
    const cases: [string, string, Record<string, string>][] = [
      ["/v1/decide", '{"tool":"read_file","arguments":{},"unknown":1}', {}],
      ["/v1/decide", "{not json", {}],
      ["/pre-tool-check", "{not json", {}],
      ["/pre-tool-check", JSON.stringify({ blob: "x".repeat(2 * 1024 * 1024) }), {}],
      ["/pre-tool-check", "text", { "content-type": "text/plain" }],
      ["/mcp", "{not json", { accept: "application/json, text/event-stream" }],
      [`/v1/consent/cr_${"0".repeat(32)}/response`, '{"decision":"maybe"}', {}],
    ];
    for (const [path, body, headers] of cases) {
      const res = await anonymous(path, body, headers);
      expect({ path, status: res.status }).toEqual({ path, status: 401 });
      expect((await errorOf(res)).code).toBe("auth_token_missing");
    }
    const wrong = await anonymous("/v1/decide", '{"zzz":1}', { authorization: "Bearer wrong" });
    expect(wrong.status).toBe(401);
    expect((await errorOf(wrong)).code).toBe("auth_token_wrong");
  });

  it("answers the console's JSON calls without a session 401 before their body is validated", async () => {
    const res = await anonymous(`/console/api/consent/cr_${"0".repeat(32)}`, '{"decision":"maybe","x":1}');
    expect(res.status).toBe(401);
    expect((await errorOf(res)).code).toBe("console_session_required");
  });
});

describe("objects are closed, as the reference says", () => {
  it("refuses an unknown field inside the graph target of /v1/decide", async () => {
    const res = await post("/v1/decide", {
      tool: "read_file",
      arguments: {},
      graph: { domain: "files", action: "read", confdence: 0.9 },
    });
    expect(res.status).toBe(400);
    expect(await errorOf(res)).toEqual({ code: "unknown_field", message: "body/graph: unknown field `confdence`" });
  });
});

describe("what a client is told", () => {
  it("names the scheme in WWW-Authenticate on a 401 for a missing or wrong token (RFC 6750)", async () => {
    const missing = await fetch(`${s.url}/v1/audit`);
    expect(missing.status).toBe(401);
    expect(missing.headers.get("www-authenticate")).toBe('Bearer realm="acp"');
    const wrong = await fetch(`${s.url}/v1/audit`, { headers: { authorization: "Bearer wrong" } });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get("www-authenticate")).toBe('Bearer realm="acp", error="invalid_token"');
    const check = await fetch(`${s.url}/pre-tool-check`, {
      method: "POST",
      headers: { authorization: "Bearer wrong", "content-type": "application/json" },
      body: "{}",
    });
    expect(check.headers.get("www-authenticate")).toBe('Bearer realm="acp", error="invalid_token"');
  });

  it("counts invalid events in acp_http_errors_total like every other 4xx", async () => {
    const count = async (): Promise<number> => {
      const text = await (await get("/metrics")).text();
      const m = /acp_http_errors_total\{status="400",code="invalid_event"\} (\d+)/.exec(text);
      return m === null ? 0 : Number(m[1]);
    };
    const before = await count();
    const res = await post("/pre-tool-check", { tool_name: "x" });
    expect(res.status).toBe(400);
    expect(await count()).toBe(before + 1);
  });
});

describe("the event stream", () => {
  it("carries the security headers every other answer has", async () => {
    const stop = new AbortController();
    const res = await fetch(`${s.url}/v1/consent/events`, {
      headers: { authorization: `Bearer ${TOKEN}` },
      signal: stop.signal,
    });
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    stop.abort();
  });
});

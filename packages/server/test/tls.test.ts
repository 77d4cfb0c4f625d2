/** `acp serve` over TLS: the console cookie is `Secure` and browsers are told to keep to HTTPS. */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { request } from "node:https";
import { connect } from "node:tls";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LINK_TTL_MS, SESSION_COOKIE, type EmbeddedServer } from "@acp/server";
import { openTestServerAt } from "./harness.js";

let home: string;
let server: EmbeddedServer;
let url: string;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), "acp-serve-tls-"));
  const made = spawnSync("openssl", [
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-keyout",
    join(home, "key.pem"),
    "-out",
    join(home, "cert.pem"),
    "-subj",
    "/CN=localhost",
    "-days",
    "1",
  ]);
  if (made.status !== 0) throw new Error(`openssl: ${made.stderr.toString()}`);
  ({ node: server, url } = await openTestServerAt(home, {
    tls: { key: readFileSync(join(home, "key.pem")), cert: readFileSync(join(home, "cert.pem")) },
  }));
});
afterAll(async () => {
  await server.close();
  rmSync(home, { recursive: true, force: true });
});

/** One HTTPS request to the self-signed service (an event stream is read up to its first bytes). */
function httpsCall(
  method: string,
  path: string,
  body?: string,
  headers: Record<string, string> = body === undefined ? {} : { "content-type": "application/x-www-form-urlencoded" },
): Promise<{ status: number; headers: Record<string, string | string[] | undefined> }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { method, rejectUnauthorized: false, headers }, (res) => {
      const answer = { status: res.statusCode ?? 0, headers: res.headers };
      if (String(res.headers["content-type"]).startsWith("text/event-stream")) {
        res.once("data", () => {
          resolve(answer);
          res.destroy();
        });
        return;
      }
      res.resume();
      res.on("end", () => resolve(answer));
    });
    req.on("error", reject);
    req.end(body);
  });
}

describe("acp serve over TLS", () => {
  it("signs in with a Secure, HttpOnly, SameSite=Strict cookie and sends Strict-Transport-Security", async () => {
    expect(url.startsWith("https://")).toBe(true);
    const token = await server.stores.consoleAuth.createLink(Date.now(), LINK_TTL_MS);
    const signIn = await httpsCall("POST", "/console/login", new URLSearchParams({ token }).toString());
    expect(signIn.status).toBe(303);
    const cookie = String(signIn.headers["set-cookie"]);
    expect(cookie).toMatch(/; Secure/);
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect(signIn.headers["strict-transport-security"]).toBe("max-age=31536000");
    const health = await httpsCall("GET", "/healthz");
    expect(health.headers["strict-transport-security"]).toBe("max-age=31536000");
  });

  it("names the session cookie __Host-acp_console (Secure, Path=/, no Domain) and reads only that name", async () => {
    const token = await server.stores.consoleAuth.createLink(Date.now(), LINK_TTL_MS);
    const signIn = await httpsCall("POST", "/console/login", new URLSearchParams({ token }).toString());
    const cookie = String(signIn.headers["set-cookie"]);
    expect(cookie).toMatch(/^__Host-acp_console=[A-Za-z0-9_-]+; Path=\/; /);
    expect(cookie).toMatch(/; Secure/);
    expect(cookie).not.toMatch(/Domain=/i);
    const pair = cookie.split(";")[0] ?? "";
    expect((await httpsCall("GET", "/console/pending", undefined, { cookie: pair })).status).toBe(200);
    // the same session id under the unprefixed name (which a plain-HTTP page or a subdomain could set) is not read
    const value = pair.slice(pair.indexOf("=") + 1);
    expect(
      (await httpsCall("GET", "/console/pending", undefined, { cookie: `${SESSION_COOKIE}=${value}` })).status,
    ).toBe(401);
  });

  it("sends Strict-Transport-Security and the security headers on the answers written without Fastify's send path", async () => {
    const json = { "content-type": "application/json" };
    const event = JSON.stringify({
      tool_name: "search_docs",
      tool_category: "public_read",
      authorization_state: "none",
      evidence_refs: [],
      risk_domain: "research",
      proposed_arguments: { query: "q" },
      recommended_route: "accept",
    });
    const mcpInit = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    });
    const answers = {
      "pre-tool-check": await httpsCall("POST", "/pre-tool-check", event, json),
      mcp: await httpsCall("POST", "/mcp", mcpInit, { ...json, accept: "application/json, text/event-stream" }),
      "consent events": await httpsCall("GET", "/v1/consent/events"),
      "before routing": await httpsCall("GET", "/v1/consent/%E0%A4%A"),
    };
    expect(Object.fromEntries(Object.entries(answers).map(([name, a]) => [name, a.status]))).toEqual({
      "pre-tool-check": 200,
      mcp: 200,
      "consent events": 200,
      "before routing": 400,
    });
    for (const [name, answer] of Object.entries(answers)) {
      expect({ name, hsts: answer.headers["strict-transport-security"] }).toEqual({ name, hsts: "max-age=31536000" });
      expect({ name, nosniff: answer.headers["x-content-type-options"] }).toEqual({ name, nosniff: "nosniff" });
      expect({ name, frame: answer.headers["x-frame-options"] }).toEqual({ name, frame: "DENY" });
    }
  });

  it("sends Strict-Transport-Security on a request the HTTP parser refuses", async () => {
    const { port } = new URL(url);
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect({ host: "127.0.0.1", port: Number(port), rejectUnauthorized: false }, () => {
        socket.write("NOT A REQUEST\r\n\r\n");
      });
      let text = "";
      socket.on("data", (chunk: Buffer) => (text += chunk.toString("latin1")));
      socket.on("close", () => resolve(text));
      socket.on("error", reject);
    });
    expect(raw).toMatch(/^HTTP\/1\.1 400 /);
    expect(raw).toMatch(/\r\nstrict-transport-security: max-age=31536000\r\n/);
  });
});

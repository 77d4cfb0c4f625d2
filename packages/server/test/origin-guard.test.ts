/**
 * A loopback `acp serve` answers only requests addressed to it (`Host`) from programs or local pages
 * (`Origin`), on every path, as `acp proxy --http` does. Before, `Origin` was looked at only by the
 * console's state changes: a page of another site reached the API (open on loopback without a token) and
 * `/mcp` (the MCP spec: servers must validate `Origin`), and `/healthz`, `/openapi.json`, `/docs`, the
 * console's files and unknown paths answered any `Host`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EmbeddedServer } from "@acp/server";
import { at, openTestServerAt, rawRequest, READ_EVENT } from "./harness.js";

const PUBLIC = "https://acp.example.test";
const homes: string[] = [];
let open: { node: EmbeddedServer; url: string };
let withPublic: { node: EmbeddedServer; url: string };

beforeAll(async () => {
  const home = (): string => {
    const dir = mkdtempSync(join(tmpdir(), "acp-origin-guard-"));
    homes.push(dir);
    return dir;
  };
  // no agents' token: the API answers loopback callers without one (the case a foreign page could use)
  open = await openTestServerAt(home());
  withPublic = await openTestServerAt(home(), { publicUrl: PUBLIC });
});
afterAll(async () => {
  await open?.node.close();
  await withPublic?.node.close();
  for (const dir of homes) rmSync(dir, { recursive: true, force: true });
});

const MCP_LIST = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });
const JSON_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

/** Every kind of path: the API, the MCP endpoint, the console (page, file, state change), probes, docs, a 404. */
function requests(url: string): { name: string; method: string; path: string; body?: string }[] {
  return [
    { name: "pre-tool-check", method: "POST", path: "/pre-tool-check", body: JSON.stringify(READ_EVENT) },
    { name: "mcp", method: "POST", path: "/mcp", body: MCP_LIST },
    { name: "consent list", method: "GET", path: "/v1/consent" },
    { name: "console page", method: "GET", path: "/console/pending" },
    { name: "console file", method: "GET", path: "/console/static/console.js" },
    { name: "console answer", method: "POST", path: "/console/api/simulate", body: "{}" },
    { name: "healthz", method: "GET", path: "/healthz" },
    { name: "openapi", method: "GET", path: "/openapi.json" },
    { name: "docs", method: "GET", path: "/docs/" },
    { name: "unknown", method: "GET", path: `/no-such-path-${new URL(url).port}` },
  ];
}

async function statuses(url: string, headers: Record<string, string>): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const r of requests(url)) {
    const res = await rawRequest(`${url}${r.path}`, {
      method: r.method,
      headers: { ...JSON_HEADERS, ...headers },
      ...(r.body !== undefined ? { body: r.body } : {}),
    });
    out[r.name] = [res.status, at(JSON.parse(res.body.startsWith("{") ? res.body : "{}"), "error", "code")];
  }
  return out;
}

function every(status: number, code: string): Record<string, unknown> {
  return Object.fromEntries(requests(open.url).map((r) => [r.name, [status, code]]));
}

describe("a loopback acp serve refuses pages of other sites and other hosts on every path", () => {
  it("answers 403 origin_not_allowed to a foreign Origin and to Origin: null", async () => {
    const host = new URL(open.url).host;
    expect(await statuses(open.url, { host, origin: "http://evil.example" })).toEqual(every(403, "origin_not_allowed"));
    expect(await statuses(open.url, { host, origin: "null" })).toEqual(every(403, "origin_not_allowed"));
    // a page of the public URL's origin is another site to a service that was not given it
    expect(await statuses(open.url, { host, origin: PUBLIC })).toEqual(every(403, "origin_not_allowed"));
  });

  it("answers 421 host_not_allowed to a request addressed to another host (DNS rebinding), whatever the path", async () => {
    expect(await statuses(open.url, { host: "evil.example" })).toEqual(every(421, "host_not_allowed"));
    // the rebinding page's own origin changes nothing: the Host is looked at first
    expect(await statuses(open.url, { host: "evil.example:80", origin: "http://evil.example" })).toEqual(
      every(421, "host_not_allowed"),
    );
  });

  it("still answers programs (no Origin), loopback pages and the public URL's origin", async () => {
    const host = new URL(open.url).host;
    for (const origin of [undefined, open.url, "http://localhost:3000", "http://[::1]:8080"]) {
      const res = await rawRequest(`${open.url}/mcp`, {
        method: "POST",
        headers: { ...JSON_HEADERS, host, ...(origin !== undefined ? { origin } : {}) },
        body: MCP_LIST,
      });
      expect({ origin, status: res.status }).toEqual({ origin, status: 200 });
      const decided = await rawRequest(`${open.url}/pre-tool-check`, {
        method: "POST",
        headers: { ...JSON_HEADERS, host, ...(origin !== undefined ? { origin } : {}) },
        body: JSON.stringify(READ_EVENT),
      });
      expect({ origin, status: decided.status }).toEqual({ origin, status: 200 });
    }
    // behind a reverse proxy: its public host and origin are taken, another origin is not
    const viaPublic = await rawRequest(`${withPublic.url}/pre-tool-check`, {
      method: "POST",
      headers: { ...JSON_HEADERS, host: new URL(PUBLIC).host, origin: PUBLIC },
      body: JSON.stringify(READ_EVENT),
    });
    expect(viaPublic.status).toBe(200);
    const foreign = await rawRequest(`${withPublic.url}/pre-tool-check`, {
      method: "POST",
      headers: { ...JSON_HEADERS, host: new URL(PUBLIC).host, origin: "https://evil.example" },
      body: JSON.stringify(READ_EVENT),
    });
    expect(foreign.status).toBe(403);
    expect(at(JSON.parse(foreign.body), "error", "message")).toContain(PUBLIC);
  });
});

/**
 * `acp serve` behind a reverse proxy: with a public URL, a loopback listener answers requests addressed
 * to the public host (it answered 421 to every one), the console takes state changes from the public
 * origin even when the proxy rewrites `Host`, and an https public URL makes the console cookie `__Host-`,
 * `Secure`, with HSTS — as if TLS ended here. A real forwarding proxy (node:http) sits in front.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parsePublicUrl, type EmbeddedServer } from "@acp/server";
import { openTestServerAt } from "./harness.js";

const PUBLIC = "https://acp.example.test";

interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** One request over node:http (which sends the `Host` header it is given). */
function send(url: string, method: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

/**
 * A forwarding reverse proxy on 127.0.0.1 in front of `upstream`: `preserve` passes the client's `Host`
 * (nginx `proxy_set_header Host $host`), `rewrite` sends the upstream's own (nginx's default).
 */
async function startProxy(upstream: string, host: "preserve" | "rewrite"): Promise<{ url: string; server: Server }> {
  const target = new URL(upstream);
  const server = createServer((req, res) => {
    const headers = { ...req.headers, ...(host === "rewrite" ? { host: target.host } : {}) };
    const up = httpRequest(upstream + (req.url ?? "/"), { method: req.method, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    up.on("error", () => res.writeHead(502).end());
    req.pipe(up);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (typeof address !== "object" || address === null) throw new Error("no address");
  return { url: `http://127.0.0.1:${address.port}`, server };
}

const homes: string[] = [];
const nodes: EmbeddedServer[] = [];
const proxies: Server[] = [];

async function service(publicUrl?: string): Promise<{ node: EmbeddedServer; url: string }> {
  const home = mkdtempSync(join(tmpdir(), "acp-public-url-"));
  homes.push(home);
  const opened = await openTestServerAt(home, publicUrl !== undefined ? { publicUrl } : {});
  nodes.push(opened.node);
  return opened;
}

let withPublic: { node: EmbeddedServer; url: string };
let without: { node: EmbeddedServer; url: string };
beforeAll(async () => {
  withPublic = await service(PUBLIC);
  without = await service();
});
afterAll(async () => {
  for (const p of proxies) p.close();
  for (const n of nodes) await n.close();
  for (const h of homes) rmSync(h, { recursive: true, force: true });
});

async function proxyTo(upstream: string, host: "preserve" | "rewrite"): Promise<string> {
  const p = await startProxy(upstream, host);
  proxies.push(p.server);
  return p.url;
}

/** Signs in through `front` with a fresh one-time link, as a browser on `origin` would. */
async function signIn(node: EmbeddedServer, front: string, origin: string, host = "acp.example.test"): Promise<Answer> {
  const token = await node.stores.consoleAuth.createLink(Date.now(), 60_000, "alice");
  return send(
    `${front}/console/login`,
    "POST",
    { host, origin, "content-type": "application/x-www-form-urlencoded" },
    new URLSearchParams({ token }).toString(),
  );
}

describe("a public URL", () => {
  it("is an origin: scheme, host and port, nothing else", () => {
    expect(parsePublicUrl("https://acp.example.com")).toEqual({
      ok: true,
      value: { origin: "https://acp.example.com", host: "acp.example.com", https: true },
    });
    expect(parsePublicUrl("http://acp.internal:8080/")).toEqual({
      ok: true,
      value: { origin: "http://acp.internal:8080", host: "acp.internal:8080", https: false },
    });
    // the default port is dropped, as browsers send Host
    expect(parsePublicUrl("https://acp.example.com:443").ok && parsePublicUrl("https://acp.example.com:443")).toEqual({
      ok: true,
      value: { origin: "https://acp.example.com", host: "acp.example.com", https: true },
    });
    for (const [text, message] of [
      ["acp.example.com", /is not a URL/],
      ["ftp://acp.example.com", /not an http:\/\/ or https:\/\/ URL/],
      ["https://user:pw@acp.example.com", /no user name or password/],
      ["https://acp.example.com/acp", /path, query or fragment/],
      ["https://acp.example.com/?x=1", /path, query or fragment/],
      ["https://acp.example.com/#top", /path, query or fragment/],
      ["https://acp.example.com?", /path, query or fragment/],
    ] as const) {
      const parsed = parsePublicUrl(text);
      expect(parsed.ok, text).toBe(false);
      if (!parsed.ok) expect(parsed.message, text).toMatch(message);
    }
    const long = parsePublicUrl(`x${"y".repeat(5000)}`);
    expect(!long.ok && long.message.length < 200).toBe(true);
  });

  it("that is not one stops the service from starting", async () => {
    const home = mkdtempSync(join(tmpdir(), "acp-public-url-bad-"));
    homes.push(home);
    await expect(openTestServerAt(home, { publicUrl: "https://acp.example.com/acp" })).rejects.toThrow(
      /public URL: .*path, query or fragment/,
    );
  });
});

describe("acp serve on loopback behind a reverse proxy that passes Host", () => {
  it("answers requests addressed to the public host, and still refuses any other host (421)", async () => {
    const front = await proxyTo(withPublic.url, "preserve");
    const ok = await send(`${front}/readyz`, "GET", { host: "acp.example.test" });
    expect(ok.status).toBe(200);
    const list = await send(`${front}/v1/consent?status=pending`, "GET", { host: "acp.example.test" });
    expect(list.status).toBe(200);
    const other = await send(`${front}/v1/consent?status=pending`, "GET", { host: "evil.example" });
    expect(other.status).toBe(421);
    expect(other.body).toContain("acp.example.test");

    // without a public URL the same proxy gets 421 for everything, and the message says what to set
    const bare = await proxyTo(without.url, "preserve");
    const refused = await send(`${bare}/v1/consent?status=pending`, "GET", { host: "acp.example.test" });
    expect(refused.status).toBe(421);
    expect(refused.body).toContain("--public-url");
  });

  it("signs in with a __Host- Secure cookie and sends HSTS when the public URL is https", async () => {
    const front = await proxyTo(withPublic.url, "preserve");
    const answer = await signIn(withPublic.node, front, PUBLIC);
    expect(answer.status).toBe(303);
    const cookie = String(answer.headers["set-cookie"]);
    expect(cookie).toMatch(/^__Host-acp_console=[^;]+; Path=\/; HttpOnly; SameSite=Strict; .*Secure$/);
    expect(answer.headers["strict-transport-security"]).toMatch(/max-age=\d+/);
    // the session works through the proxy with that cookie
    const id = /^__Host-acp_console=([^;]+)/.exec(cookie)?.[1] ?? "";
    const page = await send(`${front}/console/pending`, "GET", {
      host: "acp.example.test",
      cookie: `__Host-acp_console=${id}`,
    });
    expect(page.status).toBe(200);
    expect(page.body).toContain("signed in as alice");

    // no public URL, no TLS: the plain cookie, no HSTS
    const plain = await signIn(without.node, without.url, without.url, new URL(without.url).host);
    expect(plain.status).toBe(303);
    expect(String(plain.headers["set-cookie"])).toMatch(/^acp_console=/);
    expect(plain.headers["strict-transport-security"]).toBeUndefined();
  });
});

describe("acp serve behind a reverse proxy that rewrites Host to its own address", () => {
  it("takes a sign-in from the public origin and refuses one from any other (403, no session)", async () => {
    const front = await proxyTo(withPublic.url, "rewrite");
    expect((await signIn(withPublic.node, front, PUBLIC)).status).toBe(303);
    const forged = await signIn(withPublic.node, front, "https://evil.example");
    expect(forged.status).not.toBe(303);
    expect(forged.headers["set-cookie"]).toBeUndefined();
    // without a public URL the public origin is not this one: the sign-in is refused
    const bare = await proxyTo(without.url, "rewrite");
    const refused = await signIn(without.node, bare, PUBLIC);
    expect(refused.status).not.toBe(303);
    expect(refused.headers["set-cookie"]).toBeUndefined();
  });
});

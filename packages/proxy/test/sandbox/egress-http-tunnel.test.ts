/**
 * Plain HTTP inside a CONNECT tunnel on a port that is not a TLS port: a front shared by many sites serves each
 * request by its `Host` header, so a tunnel let through for `front.test` must not reach `evil.example` behind
 * the same address by naming it there, on the first request or a later one of the same connection. Raw
 * requests through the real egress proxy to a loopback HTTP server that answers with the Host it was asked for.
 */
import { createServer as createHttpServer, type Server as HttpServer } from "node:http";
import { connect, createServer, type AddressInfo, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEgressDecider, parseEgressAllowList, startEgressProxy, type EgressProxy } from "../../src/index.js";
import { readRequestLine } from "../../src/sandbox/request-line.js";

let front: { server: HttpServer; port: number; hosts: string[] };
let banner: { server: Server; port: number };
let proxy: EgressProxy;
const audit: [string, Record<string, unknown>][] = [];

beforeAll(async () => {
  const hosts: string[] = [];
  // a front that serves whichever site the Host header names (as a CDN does)
  const server = createHttpServer((req, res) => {
    hosts.push(`${req.method ?? ""} ${req.url ?? ""} ${req.headers.host ?? ""}`);
    res.end(`site ${req.headers.host ?? ""}\n`);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  front = { server, port: (server.address() as AddressInfo).port, hosts };
  // a protocol that is not HTTP: the client speaks first, one line
  const echo = createServer((s) => {
    s.on("error", () => undefined);
    s.on("data", (d: Buffer) => s.end(`echo ${d.toString("utf8")}`));
  });
  await new Promise<void>((resolve) => echo.listen(0, "127.0.0.1", () => resolve()));
  banner = { server: echo, port: (echo.address() as AddressInfo).port };
  const allow = parseEgressAllowList(["front.test:*"]);
  if (!allow.ok) throw new Error("bad allow-list");
  proxy = await startEgressProxy({
    decider: createEgressDecider({
      allow: allow.value,
      broker: { ask: () => Promise.resolve({ kind: "expired" }) },
      sessionId: "s1",
      // listed literally, so the loopback is let through: these tests never leave the host
      resolve: () => Promise.resolve("127.0.0.1"),
    }),
    audit: { record: (type, fields) => void audit.push([type, fields]) },
    listen: { tcp: true },
    clientHelloTimeoutMs: 300,
  });
});

afterAll(async () => {
  await proxy?.close();
  front?.server.close();
  banner?.server.close();
});

/** Opens `CONNECT target`, then sends `parts` one after another; resolves with all the far end sent. */
function through(target: string, parts: string[]): Promise<string> {
  const port = Number(new URL(proxy.address).port);
  return new Promise((resolve) => {
    const s: Socket = connect(port, "127.0.0.1");
    let got = "";
    let open = false;
    s.on("data", (d: Buffer) => {
      got += d.toString("latin1");
      if (!open && got.includes("\r\n\r\n")) {
        open = true;
        got = got.slice(got.indexOf("\r\n\r\n") + 4);
        void (async () => {
          for (const part of parts) {
            if (s.destroyed) return;
            s.write(part);
            await new Promise((r) => setTimeout(r, 20));
          }
        })();
      }
    });
    s.on("error", () => undefined);
    s.on("close", () => resolve(got));
    s.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`);
  });
}

describe("plain HTTP in a CONNECT tunnel", () => {
  it("sends the first request with the host the tunnel was let through for, not the agent's Host", async () => {
    front.hosts.length = 0;
    const got = await through(`front.test:${front.port}`, [
      "GET /page HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n",
    ]);
    expect(got).toContain(`site front.test:${front.port}`);
    expect(front.hosts).toEqual([`GET /page front.test:${front.port}`]);
  });

  it("sends every later request of the connection with it too (a second request cannot switch sites)", async () => {
    front.hosts.length = 0;
    const got = await through(`front.test:${front.port}`, [
      `GET /one HTTP/1.1\r\nHost: front.test:${front.port}\r\n\r\n` + "GET /two HTTP/1.1\r\nHost: evil.example\r\n\r\n",
    ]);
    expect(got).not.toContain("evil.example");
    expect(front.hosts.every((h) => h.endsWith(` front.test:${front.port}`))).toBe(true);
    expect(front.hosts[0]).toBe(`GET /one front.test:${front.port}`);
  });

  it("ignores the host of an absolute URL in the tunnel, and blank lines before the request", async () => {
    front.hosts.length = 0;
    await through(`front.test:${front.port}`, [
      "\r\n",
      "\r\n",
      "GET http://evil.example/x?y=1 HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n",
    ]);
    expect(front.hosts).toEqual([`GET /x?y=1 front.test:${front.port}`]);
  });

  it("recognises a request line sent in pieces", async () => {
    front.hosts.length = 0;
    await through(`front.test:${front.port}`, [
      "G",
      "ET /sl",
      "ow HTTP/1",
      ".1\r",
      "\nHost: evil.example\r\nConnection: close\r\n\r\n",
    ]);
    expect(front.hosts).toEqual([`GET /slow front.test:${front.port}`]);
  });

  it("records the tunnel once it closes as sandbox_egress with the bytes both ways, never its contents", async () => {
    const request = "GET /recorded HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n";
    const got = await through(`front.test:${front.port}`, [request]);
    const expected = {
      host: "front.test",
      port: front.port,
      by: "allow_list",
      bytes_up: request.length,
      bytes_down: Buffer.byteLength(got, "latin1"),
    };
    const recorded = (): unknown[] =>
      audit
        .filter(([type]) => type === "sandbox_egress")
        .map(([, f]) => f)
        .filter((f) => f["bytes_up"] === request.length);
    // recorded once the proxy's side of the tunnel has closed too
    while (recorded().length === 0) await new Promise((r) => setTimeout(r, 10));
    expect(recorded()).toEqual([expected]);
    expect(JSON.stringify(audit)).not.toContain("evil.example");
    expect(JSON.stringify(audit)).not.toContain("/recorded");
  });

  it("passes a protocol that is not HTTP on as it is", async () => {
    expect(await through(`front.test:${banner.port}`, ["PING\r\n"])).toBe("echo PING\r\n");
    expect(await through(`front.test:${banner.port}`, ["EHLO me\r\n"])).toBe("echo EHLO me\r\n");
  });

  it("refuses a first line that does not end in time (it cannot be told from HTTP): the site gets nothing", async () => {
    audit.length = 0;
    front.hosts.length = 0;
    expect(await through(`front.test:${front.port}`, ["GET /never-ending"])).toBe("");
    expect(front.hosts).toEqual([]);
    expect(audit.filter(([type]) => type === "sandbox_egress_refused").map(([, f]) => f["reason"])).toEqual([
      `the agent's first line through the tunnel to \`front.test:${front.port}\` did not end within 300 ms, so it cannot be told from a plain HTTP request`,
    ]);
  });
});

describe("readRequestLine", () => {
  const kind = (text: string): string => readRequestLine(Buffer.from(text, "latin1"));

  it("knows a request line, however it is spaced or cased", () => {
    for (const text of [
      "GET / HTTP/1.1\r\n",
      "\r\n\r\n  POST /x HTTP/1.0\n",
      "get /x http/1.1\r\n",
      "FOO\t/ HTTP/9\r\n",
      "GET /\x01 HTTP/1.1\r\n",
    ]) {
      expect(kind(text), JSON.stringify(text)).toBe("http");
    }
  });

  it("knows other protocols, as soon as it can", () => {
    for (const text of [
      "SSH-2.0-OpenSSH_9.6\r\n",
      "\x00\x00\x00\x08",
      "PING\r\n",
      "EHLO me\r\n",
      "GET /\r\n",
      "*1\r\n",
    ]) {
      expect(kind(text), JSON.stringify(text)).toBe("not_http");
    }
  });

  it("waits while the first line may still be a request line", () => {
    for (const text of ["", "\r\n", "GE", "GET", "GET /x", "GET /x HTTP/1.1"]) {
      expect(kind(text), JSON.stringify(text)).toBe("incomplete");
    }
  });
});

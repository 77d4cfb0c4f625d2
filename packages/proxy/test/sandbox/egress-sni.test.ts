/**
 * The TLS server name inside a CONNECT tunnel: a real TLS client (node:tls) through the real egress proxy to a
 * loopback TLS server with a self-signed certificate. A tunnel let through for `egress.test` may carry a
 * ClientHello for `egress.test` only, not for another site behind the same front (domain fronting), not one
 * without a server name, and on a TLS port nothing but TLS.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { connect as netConnect, createServer, type AddressInfo, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect as tlsConnect, createServer as createTlsServer, type Server as TlsServer } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEgressDecider, parseEgressAllowList, startEgressProxy, type EgressProxy } from "../../src/index.js";

let dir: string;
let cert: Buffer;
let site: { server: TlsServer; port: number; handshakes: string[] };
let plain: { server: Server; port: number };
let proxy: EgressProxy;
const audit: [string, Record<string, unknown>][] = [];
const logged: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "acp-sbx-sni-"));
  const made = spawnSync("openssl", [
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-keyout",
    join(dir, "key.pem"),
    "-out",
    join(dir, "cert.pem"),
    "-subj",
    "/CN=egress.test",
    "-addext",
    "subjectAltName=DNS:egress.test,DNS:evil.example,IP:127.0.0.1",
    "-days",
    "1",
  ]);
  if (made.status !== 0) throw new Error(`openssl: ${made.stderr.toString()}`);
  cert = readFileSync(join(dir, "cert.pem"));
  // a front that serves any name it is asked for (one certificate for both, as a CDN's would)
  const handshakes: string[] = [];
  const server = createTlsServer({ key: readFileSync(join(dir, "key.pem")), cert }, (s) => {
    handshakes.push(String((s as unknown as { servername: string | false }).servername));
    s.on("error", () => undefined);
    s.end(`site ${String((s as unknown as { servername: string | false }).servername)}\n`);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  site = { server, port: (server.address() as AddressInfo).port, handshakes };
  // a service that speaks first and is not TLS (SSH, SMTP), on a port that is not a TLS port
  const banner = createServer((s) => {
    s.on("error", () => undefined);
    s.write("banner\n");
    s.on("data", (d: Buffer) => s.end(`echo ${d.toString("utf8")}`));
  });
  await new Promise<void>((resolve) => banner.listen(0, "127.0.0.1", () => resolve()));
  plain = { server: banner, port: (banner.address() as AddressInfo).port };
  // listed literally, so the loopback is let through: these tests never leave the host
  const allow = parseEgressAllowList(["egress.test:*", "127.0.0.1:*"]);
  if (!allow.ok) throw new Error("bad allow-list");
  proxy = await startEgressProxy({
    decider: createEgressDecider({
      allow: allow.value,
      broker: { ask: () => Promise.resolve({ kind: "expired" }) },
      sessionId: "s1",
      resolve: () => Promise.resolve("127.0.0.1"),
    }),
    audit: { record: (type, fields) => void audit.push([type, fields]) },
    listen: { tcp: true },
    tlsPorts: [443, site.port],
    clientHelloTimeoutMs: 300,
    log: (line) => void logged.push(line),
  });
});

afterAll(async () => {
  await proxy?.close();
  site?.server.close();
  plain?.server.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

/** Opens a CONNECT tunnel through the proxy; resolves with the socket once the proxy answered 200. */
function tunnel(target: string): Promise<Socket> {
  const port = Number(new URL(proxy.address).port);
  return new Promise((resolve, reject) => {
    const s = netConnect(port, "127.0.0.1");
    let answer = "";
    const onData = (d: Buffer): void => {
      answer += d.toString("latin1");
      const end = answer.indexOf("\r\n\r\n");
      if (end < 0) return;
      s.off("data", onData);
      s.pause();
      if (!answer.startsWith("HTTP/1.1 200 ")) reject(new Error(answer));
      const rest = answer.slice(end + 4);
      if (rest !== "") s.unshift(Buffer.from(rest, "latin1"));
      resolve(s);
    };
    s.on("data", onData);
    s.on("error", reject);
    s.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`);
  });
}

/** A TLS handshake over a tunnel; resolves with what the site answered, or the error that ended it. */
function handshake(socket: Socket, servername: string | undefined, host = "egress.test"): Promise<string> {
  return new Promise((resolve) => {
    // `host` is the name the certificate is checked against; `servername` what the ClientHello names
    const t = tlsConnect({ socket, host, ca: cert, ...(servername !== undefined ? { servername } : {}) });
    let got = "";
    t.on("data", (d: Buffer) => (got += d.toString("utf8")));
    t.on("error", (err: NodeJS.ErrnoException) => resolve(`error ${err.code ?? err.message}`));
    t.on("close", () => resolve(got));
  });
}

/** Everything the tunnel's far end sends until it closes, after writing `data` (when given). */
function exchange(socket: Socket, data?: string): Promise<string> {
  return new Promise((resolve) => {
    let got = "";
    socket.on("data", (d: Buffer) => (got += d.toString("utf8")));
    socket.on("error", () => undefined);
    socket.on("close", () => resolve(got));
    socket.resume();
    if (data !== undefined) socket.write(data);
  });
}

const refusals = (): Record<string, unknown>[] =>
  audit.filter(([type]) => type === "sandbox_egress_refused").map(([, fields]) => fields);

describe("the TLS server name in a CONNECT tunnel", () => {
  it("lets a ClientHello for the CONNECT host through, and records the server name", async () => {
    expect(await handshake(await tunnel(`egress.test:${site.port}`), "egress.test")).toBe("site egress.test\n");
    expect(site.handshakes).toContain("egress.test");
    await expect
      .poll(() => audit.find(([type, f]) => type === "sandbox_egress" && f["server_name"] === "egress.test"))
      .toBeDefined();
  });

  it("refuses a ClientHello for another host behind the same front (domain fronting): the site never sees it", async () => {
    const before = site.handshakes.length;
    const answer = await handshake(await tunnel(`egress.test:${site.port}`), "evil.example");
    expect(answer).not.toContain("site");
    expect(site.handshakes.length).toBe(before);
    expect(refusals()).toContainEqual({
      host: "egress.test",
      port: site.port,
      server_name: "evil.example",
      reason: `the TLS ClientHello through the tunnel to \`egress.test:${site.port}\` names \`evil.example\`, another host than the one the tunnel was let through for`,
    });
    expect(logged.some((l) => l.startsWith("egress refused: ") && l.includes("evil.example"))).toBe(true);
  });

  it("refuses a ClientHello without a server name when the CONNECT host is a name", async () => {
    const before = site.handshakes.length;
    expect(await handshake(await tunnel(`egress.test:${site.port}`), undefined)).not.toContain("site");
    expect(site.handshakes.length).toBe(before);
    expect(refusals().map((f) => f["reason"])).toContain(
      `the TLS ClientHello through the tunnel to \`egress.test:${site.port}\` names no server (SNI); it must name \`egress.test\``,
    );
  });

  it("lets a ClientHello without a server name through to an IP address (clients send none for one)", async () => {
    expect(await handshake(await tunnel(`127.0.0.1:${site.port}`), undefined, "127.0.0.1")).toBe("site false\n");
  });

  it("matches the server name case-insensitively", async () => {
    expect(await handshake(await tunnel(`egress.test:${site.port}`), "Egress.TEST")).toBe("site Egress.TEST\n");
  });

  it("refuses bytes that are not TLS on a TLS port (fail closed): the site gets none of them", async () => {
    const answer = await exchange(
      await tunnel(`egress.test:${site.port}`),
      "GET / HTTP/1.1\r\nHost: evil.example\r\n\r\n",
    );
    expect(answer).toBe("");
    expect(refusals().map((f) => f["reason"])).toContain(
      `the tunnel to \`egress.test:${site.port}\` carries TLS only, and the agent's first bytes are not a TLS ClientHello`,
    );
  });

  it("closes a tunnel on a TLS port whose agent sends no ClientHello in time", async () => {
    expect(await exchange(await tunnel(`egress.test:${site.port}`))).toBe("");
    expect(refusals().map((f) => f["reason"])).toContain(
      `the agent sent no complete TLS ClientHello through the tunnel to \`egress.test:${site.port}\` within 300 ms`,
    );
  });

  it("passes a protocol that is not TLS on another port, with the server speaking first", async () => {
    const socket = await tunnel(`egress.test:${plain.port}`);
    const got = await new Promise<string>((resolve) => {
      let text = "";
      socket.on("data", (d: Buffer) => {
        text += d.toString("utf8");
        // the banner came before the agent sent anything: answer it
        if (text === "banner\n") socket.write("hello");
      });
      socket.on("close", () => resolve(text));
      socket.resume();
    });
    expect(got).toBe("banner\necho hello");
  });
});

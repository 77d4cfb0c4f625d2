/**
 * The egress proxy as the agent meets it: raw requests on its socket, a listener on the host's loopback
 * standing for ACP's own ports and approval channels, and a broker that approves everything it is asked
 * (so only the proxy's own checks stand between the agent and the host).
 */
import { createServer as createHttpServer } from "node:http";
import { connect, createServer, type AddressInfo, type Server } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createEgressDecider,
  parseEgressAllowList,
  startEgressProxy,
  type ConsentAsk,
  type EgressProxy,
} from "../../src/index.js";

let host: { server: Server; port: number; reached: number };
let proxy: EgressProxy;
const asks: ConsentAsk[] = [];

beforeAll(async () => {
  const server = createServer((s) => {
    host.reached++;
    s.end("host loopback\n");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  host = { server, port: (server.address() as AddressInfo).port, reached: 0 };
  const allow = parseEgressAllowList(["egress.test:*"]);
  if (!allow.ok) throw new Error("bad allow-list");
  proxy = await startEgressProxy({
    decider: createEgressDecider({
      allow: allow.value,
      broker: {
        ask: (a) => {
          asks.push(a);
          return Promise.resolve({ kind: "approved", arguments: {}, consentResponse: {}, scope: "once" });
        },
      },
      sessionId: "s1",
      // listed literally, so a local address is let through: these tests never leave the host's loopback
      resolve: () => Promise.resolve("127.0.0.1"),
    }),
    audit: { record: () => undefined },
    listen: { tcp: true },
  });
});

afterAll(async () => {
  await proxy?.close();
  host?.server.close();
});

/** Sends `raw` to the egress proxy; resolves with everything it answered before closing. */
function send(raw: string): Promise<string> {
  return sendTo(proxy, raw);
}

function sendTo(to: EgressProxy, raw: string): Promise<string> {
  const port = Number(new URL(to.address).port);
  return new Promise((resolve) => {
    const s = connect(port, "127.0.0.1");
    let answer = "";
    s.on("data", (d: Buffer) => {
      answer += d.toString("utf8");
      // a refusal ends the exchange; a tunnel would stay open, so stop at the first full answer
      if (answer.includes("\r\n\r\n")) s.end();
    });
    s.on("close", () => resolve(answer));
    s.on("error", () => resolve(answer));
    s.write(raw);
  });
}

describe("egress proxy", () => {
  it("refuses the host's loopback spelled as an IPv4-mapped IPv6 address, even when a person would approve", async () => {
    const before = asks.length;
    const answer = await send(`CONNECT [::ffff:127.0.0.1]:${host.port} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 403 /);
    expect(answer).toContain("local address");
    expect(asks.length).toBe(before);
    expect(host.reached).toBe(0);
  });

  it("refuses port 0 rather than deciding on it and connecting to another port", async () => {
    // `http://HOST:0/` would be decided as port 0 (allowed here by `egress.test:*`) and sent to port 80
    const before = asks.length;
    for (const raw of [
      "GET http://egress.test:0/ HTTP/1.1\r\nHost: egress.test:0\r\n\r\n",
      "CONNECT egress.test:0 HTTP/1.1\r\nHost: egress.test:0\r\n\r\n",
    ]) {
      expect(await send(raw), raw).toMatch(/^HTTP\/1\.1 400 /);
    }
    expect(asks.length).toBe(before);
  });

  it("decides `CONNECT HOST:80` as port 80 (not a request without a port)", async () => {
    const decided: number[] = [];
    const port80 = await startEgressProxy({
      decider: {
        decide: (_host, port) => {
          decided.push(port);
          return Promise.resolve({ allowed: false, reason: "test" });
        },
      },
      audit: { record: () => undefined },
      listen: { tcp: true },
    });
    try {
      const answer = await sendTo(port80, "CONNECT egress.test:80 HTTP/1.1\r\nHost: egress.test:80\r\n\r\n");
      expect(answer).toMatch(/^HTTP\/1\.1 403 /);
      expect(await sendTo(port80, "CONNECT egress.test HTTP/1.1\r\nHost: egress.test\r\n\r\n")).toMatch(
        /^HTTP\/1\.1 400 /,
      );
      expect(decided).toEqual([80]);
    } finally {
      await port80.close();
    }
  });

  it("sends the host it decided, not the agent's own Host header (no virtual host that was never decided)", async () => {
    const seen: (string | undefined)[] = [];
    const site = createHttpServer((req, res) => {
      seen.push(req.headers.host);
      res.end("site\n");
    });
    await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", () => resolve()));
    const port = (site.address() as AddressInfo).port;
    try {
      const answer = await send(
        `GET http://egress.test:${port}/page HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n`,
      );
      expect(answer).toMatch(/^HTTP\/1\.1 200 /);
      expect(seen).toEqual([`egress.test:${port}`]);
    } finally {
      site.close();
    }
  });

  it("keeps at most maxConnections open at once: one more is closed unanswered, and the log says so", async () => {
    const lines: string[] = [];
    const capped = await startEgressProxy({
      decider: { decide: () => Promise.resolve({ allowed: false, reason: "test" }) },
      audit: { record: () => undefined },
      listen: { tcp: true },
      maxConnections: 1,
      log: (line) => lines.push(line),
    });
    const port = Number(new URL(capped.address).port);
    const held = connect(port, "127.0.0.1");
    try {
      // an idle connection, accepted before the next (the server takes them in the order they came)
      await new Promise<void>((resolve) => held.once("connect", () => resolve()));
      const answer = await sendTo(capped, "CONNECT egress.test:443 HTTP/1.1\r\nHost: egress.test:443\r\n\r\n");
      expect(answer).toBe("");
      expect(lines).toContain("egress: 1 connection(s) refused: 1 are open at once");
    } finally {
      held.destroy();
      await capped.close();
    }
  });
});

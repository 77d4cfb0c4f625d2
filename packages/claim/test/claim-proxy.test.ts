import { afterEach, describe, expect, it } from "vitest";
import { limitedBody } from "../src/http/failure.js";
import { startProvider, type Provider } from "./harness.js";

let p: Provider | undefined;
afterEach(async () => {
  await p?.close();
  p = undefined;
});

const discovery = (q: Provider, forwardedFor?: string): Promise<number> =>
  q
    .req("api.localhost", "GET", "/.well-known/agent-access", {
      headers: forwardedFor === undefined ? {} : { "x-forwarded-for": forwardedFor },
    })
    .then((r) => r.status);

describe("behind a reverse proxy (a TLS terminator in front): whose range a request is", () => {
  it("with the proxy trusted, each client is its own range: one client's budget spent leaves the others theirs", async () => {
    p = await startProvider({ trustedProxies: ["127.0.0.1"], requestsPerIpPerHour: 3 });
    for (let i = 0; i < 3; i++) expect(await discovery(p, "198.51.100.7")).toBe(200);
    expect(await discovery(p, "198.51.100.8")).toBe(429); // the same /24
    // hops left of the one the proxy appended are the client's word: they change nothing
    expect(await discovery(p, "203.0.113.1, 198.51.100.9")).toBe(429);
    expect(await discovery(p, "203.0.113.9")).toBe(200);
    expect(await discovery(p, "2001:db8::1")).toBe(200);
    expect(p.logs.map((l) => l.ip_range)).toContain("203.0.113.0/24");
  });

  it("an X-Forwarded-For hop that is not an address, or none, is the proxy's own range, never a source of its own", async () => {
    p = await startProvider({ trustedProxies: ["127.0.0.1"], requestsPerIpPerHour: 3 });
    expect(await discovery(p, "garbage-1")).toBe(200);
    expect(await discovery(p, "garbage-2")).toBe(200);
    expect(await discovery(p)).toBe(200);
    const r = await p.req("api.localhost", "GET", "/.well-known/agent-access", {
      headers: { "x-forwarded-for": "garbage-3" },
    });
    expect([r.status, r.body]).toEqual([429, limitedBody(Number(r.headers["retry-after"]))]);
    expect(await discovery(p, "198.51.100.7")).toBe(200);
  });

  it("without trusted proxies X-Forwarded-For is ignored: a client cannot name itself another range", async () => {
    p = await startProvider({ requestsPerIpPerHour: 3 });
    for (const hop of ["198.51.100.1", "198.51.101.1", "198.51.102.1"]) expect(await discovery(p, hop)).toBe(200);
    expect(await discovery(p, "198.51.103.1")).toBe(429);
    expect(p.logs.every((l) => l.ip_range === "127.0.0.0/24")).toBe(true);
  });
});

import { describe, expect, it } from "vitest";
import {
  chooseIsolation,
  createEgressDecider,
  isLocalAddress,
  parseEgressAllowList,
  type ConsentAsk,
  type ConsentOutcome,
} from "../../src/index.js";

const rules = (entries: string[]) => {
  const r = parseEgressAllowList(entries);
  if (!r.ok) throw new Error("bad");
  return r.value;
};
const signal = new AbortController().signal;

function decider(answer: (ask: ConsentAsk) => Promise<ConsentOutcome>, allow: string[] = []) {
  const asks: ConsentAsk[] = [];
  const lookups: string[] = [];
  const d = createEgressDecider({
    allow: rules(allow),
    broker: { ask: (a) => (asks.push(a), answer(a)) },
    sessionId: "s1",
    resolve: (host) => {
      lookups.push(host);
      return Promise.resolve(host === "local.test" ? "127.0.0.1" : "93.184.216.34");
    },
  });
  return { d, asks, lookups };
}
const approveOnce = (): Promise<ConsentOutcome> =>
  Promise.resolve({ kind: "approved", arguments: {}, consentResponse: {}, scope: "once" });

describe("egress decision", () => {
  it("lets allow-listed destinations through without asking", async () => {
    const { d, asks } = decider(() => Promise.reject(new Error("must not ask")), ["api.example.com:443"]);
    expect(await d.decide("api.example.com", 443, signal)).toMatchObject({ allowed: true, by: "allow_list" });
    expect(asks).toHaveLength(0);
  });

  it("asks network.connect for other destinations and refuses when nobody answers", async () => {
    const { d, asks } = decider(() => Promise.resolve({ kind: "expired" }));
    const verdict = await d.decide("other.example.com", 443, signal);
    expect(verdict).toMatchObject({ allowed: false });
    expect(asks[0]).toMatchObject({
      tool: "network.connect",
      arguments: { host: "other.example.com", port: 443 },
      decision: { category: "network.connect", route: "ask" },
    });
  });

  it("refuses when the broker fails (fail closed)", async () => {
    const { d } = decider(() => Promise.reject(new Error("channel down")));
    expect(await d.decide("other.example.com", 443, signal)).toMatchObject({ allowed: false });
  });

  it("remembers a session approval for the rest of the run, but not a once approval", async () => {
    const approve = (scope: "once" | "session") =>
      Promise.resolve<ConsentOutcome>({ kind: "approved", arguments: {}, consentResponse: {}, scope });
    const once = decider(() => approve("once"));
    await once.d.decide("a.example.com", 443, signal);
    await once.d.decide("a.example.com", 443, signal);
    expect(once.asks).toHaveLength(2);
    const session = decider(() => approve("session"));
    await session.d.decide("a.example.com", 443, signal);
    expect(await session.d.decide("a.example.com", 443, signal)).toMatchObject({ by: "approved_before" });
    expect(session.asks).toHaveLength(1);
  });

  it("never asks for loopback destinations (they lead to ACP and its approval channels)", async () => {
    const { d, asks } = decider(approveOnce);
    expect(await d.decide("127.0.0.1", 8443, signal)).toMatchObject({ allowed: false });
    expect(await d.decide("localhost", 80, signal)).toMatchObject({ allowed: false });
    expect(asks).toHaveLength(0);
    const literal = decider(() => Promise.reject(new Error("no")), ["127.0.0.1:9000"]);
    expect(await literal.d.decide("127.0.0.1", 9000, signal)).toMatchObject({ allowed: true });
  });

  it("never asks for the host's loopback spelled as an IPv4-mapped or -compatible IPv6 address", async () => {
    // `CONNECT [::ffff:127.0.0.1]:PORT` reaches the decider as `::ffff:7f00:1` (the URL parser's spelling)
    const { d, asks } = decider(approveOnce);
    for (const host of ["::ffff:7f00:1", "[::ffff:7f00:1]", "::ffff:127.0.0.1", "::7f00:1", "::ffff:a9fe:a9fe"]) {
      expect(await d.decide(host, 8443, signal), host).toMatchObject({ allowed: false });
    }
    expect(asks).toHaveLength(0);
  });

  it("looks a name up only once it is let through: a lookup would carry the name out to its DNS", async () => {
    const refused = decider(() => Promise.resolve({ kind: "denied", reason: "no" }));
    expect(await refused.d.decide("c2VjcmV0.exfil.example", 443, signal)).toMatchObject({ allowed: false });
    expect(refused.asks).toHaveLength(1);
    expect(refused.lookups).toEqual([]);

    const approved = decider(approveOnce, ["api.example.com:443"]);
    expect(await approved.d.decide("api.example.com", 443, signal)).toMatchObject({
      allowed: true,
      by: "allow_list",
      address: "93.184.216.34",
    });
    expect(await approved.d.decide("other.example", 443, signal)).toMatchObject({ allowed: true, by: "consent" });
    expect(approved.lookups).toEqual(["api.example.com", "other.example"]);
  });

  it("refuses a name that resolves to a local address even after a person approved it", async () => {
    const { d, asks } = decider(approveOnce);
    expect(await d.decide("local.test", 80, signal)).toMatchObject({
      allowed: false,
      reason: expect.stringContaining("local address") as unknown,
    });
    expect(asks).toHaveLength(1);
  });

  it("knows local addresses", () => {
    const local = ["127.0.0.1", "127.1.2.3", "0.0.0.0", "::1", "::", "::ffff:127.0.0.1", "::ffff:7f00:1"];
    for (const a of [...local, "::7f00:1", "169.254.1.1", "::ffff:a9fe:101", "fe80::1", "febf::1"]) {
      expect(isLocalAddress(a), a).toBe(true);
    }
    for (const a of ["10.0.0.1", "93.184.216.34", "2001:db8::1", "::ffff:a00:1", "fec0::1"]) {
      expect(isLocalAddress(a), a).toBe(false);
    }
  });
});

describe("isolation choice", () => {
  const yes = { ok: true };
  const no = (why: string) => ({ ok: false, why });
  it("auto takes the strongest level available and says what it passed over", () => {
    expect(chooseIsolation("auto", { netns: yes, userns: yes })).toMatchObject({
      ok: true,
      choice: { level: "netns" },
    });
    expect(chooseIsolation("auto", { netns: no("netns needs root"), userns: yes })).toMatchObject({
      ok: true,
      choice: { level: "userns", passedOver: ["netns: netns needs root"] },
    });
    expect(chooseIsolation("auto", { netns: no("a"), userns: no("b") })).toMatchObject({
      ok: true,
      choice: { level: "none", passedOver: ["netns: a", "userns: b"] },
    });
  });
  it("an explicit level the kernel refuses is an error naming the cause and the fix", () => {
    const r = chooseIsolation("userns", { netns: yes, userns: no("unshare failed: No space left on device") });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.code).toBe("sandbox_unavailable");
    expect(r.error.message).toContain("No space left on device");
    expect(r.error.message).toContain("unprivileged_userns_clone");
  });
});

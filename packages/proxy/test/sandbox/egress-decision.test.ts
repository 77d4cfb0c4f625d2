import type { NetworkInterfaceInfo } from "node:os";
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

type Interfaces = NodeJS.Dict<NetworkInterfaceInfo[]>;

/** A fake interface list: `lo` plus the given addresses on `eth0`. */
function interfaceList(...addresses: string[]): Interfaces {
  const entry = (address: string, internal: boolean): NetworkInterfaceInfo =>
    address.includes(":")
      ? {
          address,
          netmask: "ffff:ffff:ffff:ffff::",
          family: "IPv6",
          mac: "02:00:00:00:00:01",
          internal,
          cidr: null,
          scopeid: 0,
        }
      : { address, netmask: "255.255.255.0", family: "IPv4", mac: "02:00:00:00:00:01", internal, cidr: null };
  return {
    lo: [entry("127.0.0.1", true), entry("::1", true)],
    eth0: addresses.map((a) => entry(a, false)),
  };
}

function decider(
  answer: (ask: ConsentAsk) => Promise<ConsentOutcome>,
  allow: string[] = [],
  interfaces: () => Interfaces = () => interfaceList(),
) {
  const asks: ConsentAsk[] = [];
  const lookups: string[] = [];
  const d = createEgressDecider({
    allow: rules(allow),
    broker: { ask: (a) => (asks.push(a), answer(a)) },
    sessionId: "s1",
    resolve: (host) => {
      lookups.push(host);
      const answers: Record<string, string> = { "local.test": "127.0.0.1", "myself.test": "10.20.30.40" };
      return Promise.resolve(answers[host] ?? "93.184.216.34");
    },
    interfaces,
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

  it("never asks for the host's own addresses on its other interfaces, in any spelling", async () => {
    // a service on the host listening on all interfaces answers on eth0's address as on loopback
    const host = () => interfaceList("10.20.30.40", "2001:db8::7", "fe80::1%eth0");
    const { d, asks } = decider(approveOnce, [], host);
    const spellings = [
      "10.20.30.40",
      "::ffff:10.20.30.40",
      "[::ffff:10.20.30.40]",
      "::ffff:a14:1e28",
      "::10.20.30.40",
      "::a14:1e28",
      "2001:db8::7",
      "2001:DB8:0:0:0:0:0:7",
      "[2001:db8::7]",
    ];
    for (const spelling of spellings) {
      expect(await d.decide(spelling, 5432, signal), spelling).toMatchObject({
        allowed: false,
        reason: expect.stringContaining("the host's own") as unknown,
      });
    }
    expect(asks).toHaveLength(0);
    // a neighbour on the same network is not the host: a person may let it through
    expect(await d.decide("10.20.30.41", 5432, signal)).toMatchObject({ allowed: true, by: "consent" });
    expect(asks).toHaveLength(1);
  });

  it("refuses a name that resolves to one of the host's own addresses even after a person approved it", async () => {
    const { d, asks } = decider(approveOnce, [], () => interfaceList("10.20.30.40"));
    expect(await d.decide("myself.test", 80, signal)).toMatchObject({
      allowed: false,
      reason: expect.stringContaining("local address") as unknown,
    });
    expect(asks).toHaveLength(1);
  });

  it("reads the interfaces at every decision: an address that comes up while the agent runs is refused", async () => {
    let addresses: string[] = [];
    const { d } = decider(approveOnce, [], () => interfaceList(...addresses));
    expect(await d.decide("10.99.0.1", 443, signal)).toMatchObject({ allowed: true });
    addresses = ["10.99.0.1"];
    expect(await d.decide("10.99.0.1", 443, signal)).toMatchObject({ allowed: false });
  });

  it("opens one of the host's own addresses only when listed literally, as for loopback", async () => {
    const literal = decider(
      () => Promise.reject(new Error("no")),
      ["10.20.30.40:8080"],
      () => interfaceList("10.20.30.40"),
    );
    expect(await literal.d.decide("10.20.30.40", 8080, signal)).toMatchObject({ allowed: true, by: "allow_list" });
    const wildcard = decider(
      () => Promise.reject(new Error("no")),
      ["10.20.30.40:*"],
      () => interfaceList("10.20.30.40"),
    );
    expect(await wildcard.d.decide("10.20.30.40", 22, signal)).toMatchObject({ allowed: true });
  });

  it("refuses everything, without asking, when the host's interfaces cannot be listed (fail closed)", async () => {
    const { d, asks } = decider(approveOnce, [], () => {
      throw new Error("uv_interface_addresses returned Unknown system error 1");
    });
    expect(await d.decide("93.184.216.34", 443, signal)).toMatchObject({
      allowed: false,
      reason: expect.stringContaining("cannot list the host's addresses") as unknown,
    });
    expect(asks).toHaveLength(0);
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

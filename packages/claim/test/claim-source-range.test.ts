import { describe, expect, it } from "vitest";
import { coarseSource } from "../src/index.js";

describe("the coarse source every rate limit, lockout, difficulty and reputation is keyed by", () => {
  it("one IPv6 /48 is one source however `::` compressed its addresses (a /48 of the form X:0:0:: got one per address)", () => {
    // As a socket reports them (RFC 5952: the longest run of zero groups compressed).
    expect(coarseSource("2001:db8::5")).toBe("2001:db8:0::/48");
    expect(coarseSource("2001:db8:0:1::5")).toBe("2001:db8:0::/48");
    expect(coarseSource("2001:db8::1:0:0:1")).toBe("2001:db8:0::/48");
    expect(new Set(["2001::5", "2001::6", "2001::1:2", "2001:0:0:1::7"].map(coarseSource))).toEqual(
      new Set(["2001:0:0::/48"]),
    );
    expect(coarseSource("2001:DB8:00AB:ffff::1")).toBe("2001:db8:ab::/48");
    expect(coarseSource("::1")).toBe("0:0:0::/48");
    expect(coarseSource("fe80::1%eth0")).toBe("fe80:0:0::/48");
    expect(coarseSource("2001:db8:1:2:3:4:5:6")).not.toBe(coarseSource("2001:db8:2:2:3:4:5:6"));
  });

  it("IPv4 and IPv4-mapped addresses are their /24; what is neither is kept apart, never merged into a real range", () => {
    expect(coarseSource("203.0.113.7")).toBe("203.0.113.0/24");
    expect(coarseSource("::ffff:203.0.113.9")).toBe("203.0.113.0/24");
    expect(coarseSource("::FFFF:203.0.113.9")).toBe("203.0.113.0/24");
    expect(coarseSource("64:ff9b::203.0.113.7")).toBe("64:ff9b:0::/48");
    expect(coarseSource(undefined)).toBe("unknown");
    expect(coarseSource("1:2:3")).toBe("unknown");
    expect(coarseSource("1::2::3")).toBe("unknown");
  });
});

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { matchEgress, parseEgressAllowList } from "../../src/index.js";

describe("egress allow-list", () => {
  it("parses names, addresses, wildcards and any-port entries", () => {
    const r = parseEgressAllowList(["api.anthropic.com:443", "*.openai.com:443", "10.0.0.5:*", "[::1]:8080"]);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(matchEgress(r.value, "API.Anthropic.com", 443)?.source).toBe("api.anthropic.com:443");
    expect(matchEgress(r.value, "api.anthropic.com", 80)).toBeUndefined();
    expect(matchEgress(r.value, "chat.openai.com", 443)?.source).toBe("*.openai.com:443");
    expect(matchEgress(r.value, "openai.com", 443)).toBeUndefined();
    expect(matchEgress(r.value, "evilopenai.com", 443)).toBeUndefined();
    expect(matchEgress(r.value, "10.0.0.5", 22)?.source).toBe("10.0.0.5:*");
    expect(matchEgress(r.value, "::1", 8080)?.source).toBe("[::1]:8080");
  });

  it("names every bad entry with a fix", () => {
    const r = parseEgressAllowList(["example.com", "exa mple.com:443", "example.com:0", "example.com:http"]);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues.map((i) => i.code)).toEqual(Array(4).fill("sandbox_invalid_egress"));
    expect(r.issues[0]?.message).toBe("`example.com` is not HOST:PORT");
    expect(r.issues[2]?.message).toContain("is not a port");
    expect(r.issues[0]?.help).toContain("HOST:PORT");
  });

  it("never matches a host that no entry names (property)", () => {
    fc.assert(
      fc.property(fc.domain(), fc.domain(), fc.integer({ min: 1, max: 65535 }), (listed, other, port) => {
        fc.pre(listed !== other && !other.endsWith(`.${listed}`));
        const r = parseEgressAllowList([`${listed}:${port}`]);
        if (!r.ok) return;
        expect(matchEgress(r.value, other, port)).toBeUndefined();
        expect(matchEgress(r.value, listed, port)).toBeDefined();
      }),
    );
  });
});

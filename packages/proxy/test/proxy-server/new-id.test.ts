import { describe, expect, it } from "vitest";
import { newId } from "../../src/proxy-server/acp-proxy.js";

describe("newId", () => {
  it("gives the prefix and 8 random bytes as hex, never the same twice (across pool refills)", () => {
    const ids = Array.from({ length: 3000 }, (_, i) => newId(i % 2 === 0 ? "call" : "session"));
    for (const [i, id] of ids.entries())
      expect(id).toMatch(i % 2 === 0 ? /^call_[0-9a-f]{16}$/ : /^session_[0-9a-f]{16}$/);
    expect(new Set(ids.map((id) => id.split("_")[1])).size).toBe(ids.length);
  });
});

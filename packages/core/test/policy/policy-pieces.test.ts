import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { checkClockTime, editDistance, isTimeZone, parseRateLimit, suggest } from "@acp/core";

describe("parseRateLimit", () => {
  it("reads N/unit into a count and a window", () => {
    expect(parseRateLimit("20/minute")).toEqual({
      ok: true,
      value: { count: 20, unit: "minute", windowMs: 60_000, text: "20/minute" },
    });
  });

  it("refuses malformed limits with a suggestion for abbreviated units", () => {
    const cases: [string, string, string | undefined][] = [
      ["20/min", "invalid rate limit `20/min`: unknown unit `min`", "did you mean `20/minute`"],
      ["5/hr", "invalid rate limit `5/hr`: unknown unit `hr`", "did you mean `5/hour`"],
      ["-1/day", "invalid rate limit `-1/day`: count `-1` is not a positive integer", undefined],
      [
        "twenty",
        "invalid rate limit `twenty`: expected N/second, N/minute, N/hour or N/day with N a positive integer, like `20/minute`",
        undefined,
      ],
      [
        "1/2/3",
        "invalid rate limit `1/2/3`: expected N/second, N/minute, N/hour or N/day with N a positive integer, like `20/minute`",
        undefined,
      ],
      ["2000000000/day", "invalid rate limit `2000000000/day`: count is larger than 1000000000", undefined],
    ];
    for (const [text, message, help] of cases) {
      const result = parseRateLimit(text);
      expect(result.ok).toBe(false);
      if (result.ok) continue;
      expect(result.issues[0]?.code).toBe("invalid_rate_limit");
      expect(result.issues[0]?.message).toBe(message);
      if (help !== undefined) expect(result.issues[0]?.help).toBe(help);
    }
  });

  it("never throws and accepts exactly the canonical form", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 30 }), (text) => {
        const result = parseRateLimit(text);
        expect(result.ok).toBe(
          /^[0-9]+\/(second|minute|hour|day)$/.test(text) &&
            Number(text.split("/")[0]) >= 1 &&
            Number(text.split("/")[0]) <= 1e9,
        );
      }),
    );
  });
});

describe("checkClockTime", () => {
  it("reads HH:MM into minutes after midnight", () => {
    expect(checkClockTime("00:00")).toEqual({ ok: true, value: 0 });
    expect(checkClockTime("09:30")).toEqual({ ok: true, value: 570 });
    expect(checkClockTime("23:59")).toEqual({ ok: true, value: 1439 });
  });

  it("accepts 24:00 only as an end of day", () => {
    expect(checkClockTime("24:00").ok).toBe(false);
    expect(checkClockTime("24:00", { endOfDay: true })).toEqual({ ok: true, value: 1440 });
  });

  it("refuses malformed times with a hint", () => {
    const bad = checkClockTime("7:05");
    expect(bad.ok ? undefined : bad.issues[0]?.help).toBe("write two-digit hours: `07:05`");
    for (const text of ["24:01", "12:60", "1200", "12:00:00", " 12:00", ""])
      expect(checkClockTime(text).ok).toBe(false);
  });
});

describe("isTimeZone", () => {
  it("knows IANA zones and refuses anything else", () => {
    expect(isTimeZone("UTC")).toBe(true);
    expect(isTimeZone("Europe/Paris")).toBe(true);
    expect(isTimeZone("Mars/Olympus")).toBe(false);
    expect(isTimeZone("")).toBe(false);
  });
});

describe("suggestions", () => {
  it("measures edits, counting an adjacent swap as one", () => {
    expect(editDistance("alow", "allow")).toBe(1);
    expect(editDistance("ruels", "rules")).toBe(1);
    expect(editDistance("", "abc")).toBe(3);
    expect(editDistance("kitten", "sitting")).toBe(3);
  });

  it("suggests the closest candidate only when it is a likely typo", () => {
    expect(suggest("acton", ["match", "action", "level"])).toBe("action");
    expect(suggest("Allow", ["allow", "ask", "deny"])).toBe("allow");
    expect(suggest("banana", ["allow", "ask", "deny"])).toBeUndefined();
    expect(suggest("refuse", ["allow", "ask", "deny"], { refuse: "deny" })).toBe("deny");
  });

  it("is symmetric and zero only for equal words", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 12 }), fc.string({ maxLength: 12 }), (a, b) => {
        expect(editDistance(a, b)).toBe(editDistance(b, a));
        expect(editDistance(a, b) === 0).toBe(a === b);
      }),
    );
  });
});

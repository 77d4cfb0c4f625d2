import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { holdsNumber, numberAliases } from "../../src/session/number-aliases.js";
import { createProvenanceEntry, deriveProvenance } from "../../src/session/provenance.js";
import { createProvenanceBudget } from "../../src/session/provenance-budget.js";

/** What a text's numbers hold, read as `textAliases` keeps them. */
function holds(text: string, piece: string): boolean {
  const { numbers, runs } = numberAliases(text);
  const spaced = (list: string[]): string => (list.length === 0 ? "" : ` ${list.join(" ")} `);
  return holdsNumber(spaced(numbers), spaced(runs), piece);
}

/** Every number of 8 to 34 digits that whole groups of `groups` spell, one after another. */
function windows(groups: readonly string[]): Set<string> {
  const out = new Set<string>();
  for (let from = 0; from < groups.length; from++) {
    for (let to = from + 1; to <= groups.length; to++) {
      const digits = groups.slice(from, to).join("");
      if (digits.length >= 8 && digits.length <= 34) out.add(digits);
    }
  }
  return out;
}

const group = fc.stringMatching(/^[0-9]{1,5}$/);

describe("a number glued by spaces to other digits, any number of groups on either side", () => {
  it("is found when whole groups of the run spell it", () => {
    fc.assert(
      fc.property(fc.array(group, { minLength: 2, maxLength: 14 }), (groups) => {
        const text = `see ${groups.join(" ")} now`;
        return [...windows(groups)].every((number) => holds(text, number));
      }),
      { numRuns: 100 },
    );
  });

  it("is not found as a part of a group, but for a country code of one to three digits", () => {
    fc.assert(
      fc.property(fc.array(group, { minLength: 2, maxLength: 20 }), fc.nat(), fc.nat(), (groups, a, b) => {
        const all = groups.join("");
        const start = a % all.length;
        const piece = all.slice(start, start + 8 + (b % 12));
        // a piece that starts with 1 to 3 digits more than whole groups is read as having a country code
        fc.pre(piece.length >= 8 && !piece.startsWith("0"));
        const held = holds(`see ${groups.join(" ")} now`, piece);
        const whole = [...windows(groups)];
        const countryCoded = (p: string): boolean =>
          whole.some((w) => {
            for (let k = 1; k <= 3; k++) {
              const national = p.slice(k);
              if (national.length >= 8 && (w === national || w === `0${national}`)) return true;
              if (w.length === p.length + k && w.endsWith(p)) return true;
            }
            return false;
          });
        expect(held).toBe(whole.includes(piece) || countryCoded(piece));
      }),
      { numRuns: 300 },
    );
  });

  it("keeps a run of any length once, with its groups marked", () => {
    const groups = Array.from({ length: 60 }, (_, i) => String(1000 + i));
    expect(numberAliases(`a ${groups.join(" ")} b`).runs).toEqual([groups.join(".")]);
    expect(numberAliases("call 12345678 now").numbers).toEqual(["12345678"]);
    expect(numberAliases("call 1234 5678 now")).toEqual({ numbers: ["12345678"], runs: [] });
  });

  it("charges reading a text's runs to the decision's work budget", () => {
    // one run of 50,000 groups: 100,000 characters kept, each read by every spelling of a number looked up
    const run = Array.from({ length: 50_000 }, (_, i) => String(i % 10)).join(" ");
    const entries = [createProvenanceEntry("external_untrusted", "web.fetch#1", `ids ${run} end`)];
    expect(entries[0]?.aliases.runs.length).toBeGreaterThan(100_000);
    const args = { recipient: "12345678", other: "87878787" };
    const whole = createProvenanceBudget();
    expect(deriveProvenance(entries, args, { budget: whole }).map((p) => p.status)).toContain("tainted");
    expect(whole.exceeded).toBe(false);
    const small = createProvenanceBudget(3_000_000);
    deriveProvenance(entries, args, { budget: small });
    expect(small.exceeded).toBe(true);
  });
});

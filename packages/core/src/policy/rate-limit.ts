import { fail, ok, type Issue, type Result } from "../issues/index.js";
import { suggest } from "../suggest/index.js";
import { MAX_RATE_LIMIT_COUNT } from "./limits.js";
import { RATE_UNITS, type RateLimit, type RateUnit } from "./types.js";
import { showInput } from "./show-input.js";

/** Length of each rate-limit window unit, in milliseconds. */
export const RATE_UNIT_MS: Readonly<Record<RateUnit, number>> = Object.freeze({
  second: 1_000,
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000,
});

/** Abbreviations and plurals people write, mapped to the unit they mean (used for suggestions only). */
const UNIT_SYNONYMS: Readonly<Record<string, RateUnit>> = {
  s: "second",
  sec: "second",
  secs: "second",
  seconds: "second",
  m: "minute",
  min: "minute",
  mins: "minute",
  minutes: "minute",
  h: "hour",
  hr: "hour",
  hrs: "hour",
  hours: "hour",
  d: "day",
  days: "day",
};

const EXPECTED = "expected N/second, N/minute, N/hour or N/day with N a positive integer, like `20/minute`";

function invalid(text: string, reason: string, help?: string): Result<RateLimit> {
  const issue: Issue = {
    code: "invalid_rate_limit",
    path: [],
    message: `invalid rate limit \`${text}\`: ${reason}`,
    ...(help !== undefined ? { help } : {}),
  };
  return fail([issue]);
}

function isRateUnit(unit: string): unit is RateUnit {
  return (RATE_UNITS as readonly string[]).includes(unit);
}

/**
 * Parses a rate limit `N/unit` (`20/minute`): N a positive integer up to {@link MAX_RATE_LIMIT_COUNT},
 * unit one of `second`, `minute`, `hour`, `day`. Never throws; a malformed text yields one
 * `invalid_rate_limit` issue (with a suggestion for plural or abbreviated units).
 */
export function parseRateLimit(text: string): Result<RateLimit> {
  const shown = showInput(text);
  const parts = text.split("/");
  if (parts.length !== 2) return invalid(shown, EXPECTED);
  const [countText = "", unit = ""] = parts;
  if (!/^[0-9]+$/.test(countText)) {
    return invalid(shown, `count \`${showInput(countText)}\` is not a positive integer`, EXPECTED);
  }
  const count = Number(countText);
  if (count < 1) return invalid(shown, "count must be at least 1", "use `action: deny` to refuse every call");
  if (count > MAX_RATE_LIMIT_COUNT) return invalid(shown, `count is larger than ${MAX_RATE_LIMIT_COUNT}`);
  if (!isRateUnit(unit)) {
    const better = suggest(unit, RATE_UNITS, UNIT_SYNONYMS);
    const help = better !== undefined ? `did you mean \`${count}/${better}\`` : EXPECTED;
    return invalid(shown, `unknown unit \`${showInput(unit)}\``, help);
  }
  return ok({ count, unit, windowMs: RATE_UNIT_MS[unit], text });
}

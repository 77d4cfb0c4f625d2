import type { TimeOfDay } from "../policy/types.js";

/** A compiled `conditions.time_of_day`: minutes after local midnight, and the zone's clock. */
export interface CompiledTimeWindow {
  /** Inclusive start in minutes after midnight (0 when only `before` is given). */
  readonly after: number;
  /** Exclusive end in minutes after midnight (1440 when only `after` is given). */
  readonly before: number;
  readonly timezone: string;
  /** Local minute of day for an instant in this zone. */
  readonly localMinutes: (now: Date) => number;
}

const MINUTES_PER_DAY = 1440;

/** Parses `HH:MM` (24-hour, `00:00`–`23:59`, and `24:00` as the end of the day) to minutes, or undefined. */
export function parseClockTime(text: string): number | undefined {
  const m = /^([01]\d|2[0-4]):([0-5]\d)$/.exec(text);
  if (m === null) return undefined;
  const minutes = Number(m[1]) * 60 + Number(m[2]);
  return minutes > MINUTES_PER_DAY ? undefined : minutes;
}

interface ZoneClock {
  readonly format: Intl.DateTimeFormat;
  lastSecond: number;
  lastMinutes: number;
}

const zoneClocks = new Map<string, ZoneClock>();
const MAX_CACHED_ZONES = 512;

function zoneClock(timezone: string): ZoneClock {
  let clock = zoneClocks.get(timezone);
  if (clock === undefined) {
    // Throws RangeError on an unknown zone; the compiler turns that into an issue.
    const format = new Intl.DateTimeFormat("en-US", {
      timeZone: timezone,
      hour: "2-digit",
      minute: "2-digit",
      hourCycle: "h23",
    });
    clock = { format, lastSecond: Number.NaN, lastMinutes: 0 };
    if (zoneClocks.size >= MAX_CACHED_ZONES) zoneClocks.clear();
    zoneClocks.set(timezone, clock);
  }
  return clock;
}

/**
 * The local minute of day (0–1439) of `now` in `timezone`. Formatters are cached per zone, and the last
 * answer per zone is kept for its UTC second (a local minute only changes on a whole UTC second), so a
 * stream of requests at one clock reading costs one map lookup. Throws on an invalid date or zone.
 */
export function localMinuteOfDay(now: Date, timezone: string): number {
  const ms = now.getTime();
  if (!Number.isFinite(ms)) throw new RangeError("invalid clock: `now` is not a valid date");
  const clock = zoneClock(timezone);
  const second = Math.floor(ms / 1000);
  if (second === clock.lastSecond) return clock.lastMinutes;
  let hour = 0;
  let minute = 0;
  for (const part of clock.format.formatToParts(now)) {
    if (part.type === "hour") hour = Number(part.value);
    else if (part.type === "minute") minute = Number(part.value);
  }
  const minutes = (hour % 24) * 60 + minute;
  clock.lastSecond = second;
  clock.lastMinutes = minutes;
  return minutes;
}

/** Compiles a time window; returns an error message (lowercase, one line) when it is malformed. */
export function compileTimeWindow(window: TimeOfDay): CompiledTimeWindow | string {
  const timezone = window.timezone;
  if (typeof timezone !== "string" || timezone.length === 0) return "time window without a time zone";
  try {
    zoneClock(timezone);
  } catch {
    return `unknown time zone \`${timezone}\``;
  }
  let after = 0;
  let before = MINUTES_PER_DAY;
  if (window.after !== undefined) {
    const parsed = parseClockTime(window.after);
    if (parsed === undefined || parsed === MINUTES_PER_DAY) return `invalid time \`${window.after}\` (expected HH:MM)`;
    after = parsed;
  }
  if (window.before !== undefined) {
    const parsed = parseClockTime(window.before);
    if (parsed === undefined) return `invalid time \`${window.before}\` (expected HH:MM)`;
    before = parsed;
  }
  return { after, before, timezone, localMinutes: (now) => localMinuteOfDay(now, timezone) };
}

/**
 * Whether local minute `t` lies in [after, before). A window with after > before crosses midnight;
 * after == before is an empty window (the rule never applies).
 */
export function isInWindow(t: number, after: number, before: number): boolean {
  return after <= before ? t >= after && t < before : t >= after || t < before;
}

import { isMap } from "yaml";
import { readMappingFields, report, reportType, type Field, type ReadContext, type Scope } from "./node-reader.js";
import { isNullField, readString } from "./read-scalars.js";
import { checkClockTime, isTimeZone } from "./time-of-day.js";
import type { TimeOfDay } from "./types.js";
import { showInput } from "./show-input.js";

/** The keys of `conditions`. */
export const CONDITION_KEYS = ["time_of_day"] as const;

/** The keys of `conditions.time_of_day`. */
export const TIME_OF_DAY_KEYS = ["after", "before", "timezone"] as const;

/** The time zone used when `time_of_day` names none. */
export const DEFAULT_TIMEZONE = "UTC";

const TIME_SYNONYMS: Readonly<Record<string, string>> = {
  from: "after",
  start: "after",
  until: "before",
  to: "before",
  end: "before",
  tz: "timezone",
  time_zone: "timezone",
  zone: "timezone",
};

function readClock(
  ctx: ReadContext,
  scope: Scope,
  field: Field,
  endOfDay: boolean,
): { text: string; minutes: number } | undefined {
  const text = readString(ctx, scope, field, 'quote the time, like `"09:00"`');
  if (text === undefined) return undefined;
  const parsed = checkClockTime(text, { endOfDay });
  if (parsed.ok) return { text, minutes: parsed.value };
  for (const issue of parsed.issues) {
    const message = `${scope.prefix}\`${field.name}\`: ${issue.message}`;
    report(ctx, field.offset, "invalid_time", field.path, message, issue.help);
  }
  return undefined;
}

function readTimeOfDay(ctx: ReadContext, scope: Scope, field: Field): TimeOfDay | undefined {
  if (field.node === null || !isMap(field.node)) {
    reportType(
      ctx,
      scope,
      field,
      "a mapping with `after` and/or `before`",
      'like `{ after: "09:00", before: "17:00" }`',
    );
    return undefined;
  }
  const before = ctx.issues.length;
  const inner: Scope = { ...scope, path: field.path };
  const fields = readMappingFields(ctx, field.node, inner, {
    name: "time_of_day",
    nameInMessages: true,
    known: TIME_OF_DAY_KEYS,
    synonyms: TIME_SYNONYMS,
  });
  const afterField = fields.get("after");
  const beforeField = fields.get("before");
  const zoneField = fields.get("timezone");
  const after = afterField !== undefined ? readClock(ctx, inner, afterField, false) : undefined;
  const until = beforeField !== undefined ? readClock(ctx, inner, beforeField, true) : undefined;
  let timezone = DEFAULT_TIMEZONE;
  if (zoneField !== undefined) {
    const zone = readString(ctx, inner, zoneField);
    if (zone !== undefined && !isTimeZone(zone)) {
      const shown = showInput(zone);
      const message = `${scope.prefix}unknown time zone \`${shown}\``;
      report(
        ctx,
        zoneField.offset,
        "invalid_timezone",
        zoneField.path,
        message,
        "use an IANA zone like `UTC` or `Europe/Paris`",
      );
    } else if (zone !== undefined) timezone = zone;
  }
  if (afterField === undefined && beforeField === undefined) {
    const message = `${scope.prefix}\`time_of_day\` needs \`after\`, \`before\` or both`;
    report(ctx, field.offset, "missing_time_bound", field.path, message, 'like `after: "09:00"`');
  }
  if (after !== undefined && until !== undefined && after.minutes === until.minutes && beforeField !== undefined) {
    const message = `${scope.prefix}\`after\` and \`before\` are both \`${after.text}\`, so the window is empty`;
    const help = 'a window that crosses midnight is fine (`after: "22:00"`, `before: "06:00"`)';
    report(ctx, beforeField.offset, "empty_time_window", beforeField.path, message, help);
  }
  if (ctx.issues.length !== before) return undefined;
  return {
    ...(after !== undefined ? { after: after.text } : {}),
    ...(until !== undefined ? { before: until.text } : {}),
    timezone,
  };
}

/** Reads a rule's `conditions` (today only `time_of_day`); `undefined` when absent, empty or invalid. */
export function readConditions(
  ctx: ReadContext,
  scope: Scope,
  field: Field,
): { readonly time_of_day?: TimeOfDay } | undefined {
  if (isNullField(field)) return undefined;
  if (field.node === null || !isMap(field.node)) {
    reportType(ctx, scope, field, "a mapping", 'like `conditions: { time_of_day: { after: "09:00" } }`');
    return undefined;
  }
  const inner: Scope = { ...scope, path: field.path };
  const fields = readMappingFields(ctx, field.node, inner, {
    name: "conditions",
    nameInMessages: true,
    known: CONDITION_KEYS,
    synonyms: { time: "time_of_day", hours: "time_of_day", timeofday: "time_of_day" },
  });
  const timeField = fields.get("time_of_day");
  if (timeField === undefined) return undefined;
  const timeOfDay = readTimeOfDay(ctx, inner, timeField);
  return timeOfDay !== undefined ? { time_of_day: timeOfDay } : undefined;
}

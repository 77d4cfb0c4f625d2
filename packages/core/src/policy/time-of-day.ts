import { fail, ok, type Result } from "../issues/index.js";
import { showInput } from "./show-input.js";

const CLOCK_TIME = /^([01][0-9]|2[0-3]):([0-5][0-9])$/;

/** Minutes in a day: `24:00`, which `before` may use for the end of the day. */
export const END_OF_DAY_MINUTES = 24 * 60;

/**
 * Checks a 24-hour clock time `HH:MM` (`00:00` to `23:59`; with `endOfDay`, also `24:00`) and returns it
 * as minutes after midnight. Never throws; malformed text yields one `invalid_time` issue with a hint
 * (`9:00` → write `09:00`).
 */
export function checkClockTime(text: string, options: { readonly endOfDay?: boolean } = {}): Result<number> {
  const match = CLOCK_TIME.exec(text);
  if (match !== null) return ok(Number(match[1]) * 60 + Number(match[2]));
  if (options.endOfDay === true && text === "24:00") return ok(END_OF_DAY_MINUTES);
  const shown = showInput(text);
  let help = "expected HH:MM in 24-hour time, like `09:00` or `17:30`";
  const loose = /^([0-9]{1,2}):([0-9]{2})$/.exec(text);
  if (loose !== null) {
    const hours = Number(loose[1]);
    const minutes = loose[2] ?? "00";
    if (hours === 24 && minutes === "00") help = "use `00:00` for midnight; a window may cross midnight";
    else if (hours < 10 && Number(minutes) < 60) help = `write two-digit hours: \`0${hours}:${minutes}\``;
  }
  return fail([{ code: "invalid_time", path: [], message: `invalid time \`${shown}\``, help }]);
}

/** Whether `zone` is an IANA time zone this runtime knows (`UTC`, `Europe/Paris`, …). Pure, no I/O. */
export function isTimeZone(zone: string): boolean {
  if (zone.length === 0 || zone.length > 64) return false;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

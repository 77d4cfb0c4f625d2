/**
 * Putting user input into one-line messages: control characters are escaped and long input is cut, so a
 * hostile value can neither break the `FILE:LINE:COL: message` format nor flood a terminal.
 */

/** Longest piece of user input quoted in a message. */
const MAX_SHOWN = 40;

// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

/** Escapes control characters (`\n`, `\u0000`, …) so the text stays on one line. */
export function oneLine(text: string): string {
  return text.replace(CONTROL, (c) => {
    if (c === "\n") return "\\n";
    if (c === "\r") return "\\r";
    if (c === "\t") return "\\t";
    return `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
  });
}

/** User input as quoted in a message: at most 40 characters (then `…`), on one line. */
export function showInput(text: string): string {
  const cut = text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN)}…` : text;
  return oneLine(cut);
}

/** The one rule for free text of a body that is signed, recorded and shown: printable characters only. */
import { hasHiddenCharacters, printable } from "@acp/core";
import { HttpError } from "./error-body.js";

/**
 * Refuses a body string holding a character core's `printable` escapes (a C0 or C1 control, a bidirectional
 * control, a zero-width or other invisible character): 400 `invalid_body` naming `body/<field>`, the value's
 * start shown escaped. `shownAs` says where the text goes (why it must read as sent). An absent value passes.
 */
export function requirePrintableField(field: string, value: string | undefined, shownAs: string): void {
  if (value === undefined || !hasHiddenCharacters(value)) return;
  throw new HttpError(
    400,
    "invalid_body",
    `body/${field}: \`${printable(value.slice(0, 100))}\` holds a control, invisible or bidirectional character ` +
      `(${shownAs}): use printable characters`,
  );
}

/**
 * The checks a person's edited arguments (`modifications`) pass before an answer is recorded: those the
 * pipeline makes of a request's `arguments` (`validateActionRequest`: at most 64 deep, 100,000 values,
 * strings within their limits, no lone surrogate, no non-finite number, no number beyond ±2^53−1). The edit
 * is judged again with the original arguments before the caller runs it, and would be refused there; an
 * answer that cannot pass is refused here instead, before it is signed, recorded or announced as approved.
 */
import { validateActionRequest } from "@acp/core";
import { HttpError } from "../http/error-body.js";

/**
 * Null when `modifications` may be recorded; otherwise the 400 answer: `unsafe_integer` for a number JSON
 * parsing may have rounded (`1234567890123456789` is read as 1234567890123456768: the approval would be
 * signed and run with a value the person never typed), `invalid_body` for the rest (a body nested thousands
 * deep would otherwise overflow the stack of the writers that serialise the answer: a 500).
 */
export function checkModifications(modifications: Record<string, unknown>): HttpError | null {
  const checked = validateActionRequest({ tool: "modifications", arguments: modifications });
  if (checked.ok) return null;
  const first = checked.issues[0];
  if (first === undefined) return null;
  const where = ["modifications", ...first.path.slice(1)].join(".");
  const message = first.message.replace(/^arguments: /, "");
  return new HttpError(
    400,
    first.code === "unsafe_integer" ? "unsafe_integer" : "invalid_body",
    `body/${where}: ${message}`,
  );
}

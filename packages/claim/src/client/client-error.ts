/**
 * A provider answered with an error, or answered in a way the client refuses. `code` is the provider's stable
 * code (`not_found` for the uniform failure) when it sent a snake_case one, else `unknown`; or, with status 0, one
 * of the client's own: `claim_response_too_large`, `claim_response_invalid`, `claim_redirect_refused`,
 * `claim_timeout`, `claim_difficulty_refused`, `claim_unsupported`.
 */
export class ClaimClientError extends Error {
  /** The HTTP status (0 when the client refused before or without one) and the stable code. */
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
  ) {
    super(message);
    this.name = "ClaimClientError";
  }
}

/**
 * Control characters (C0 including newline and tab, DEL, C1), the Unicode line and paragraph separators and the
 * bidirectional controls: a provider's text that reaches a terminal with one of them raw could erase or redraw
 * what the user sees.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** Whether `text` holds no character of {@link UNPRINTABLE}. */
export function isPrintable(text: string): boolean {
  return text.search(UNPRINTABLE) === -1;
}

/**
 * A provider's text made safe to show: every control character as a `\uXXXX` escape, cut to `max` characters
 * (with `…`), so an error message neither redraws the terminal nor fills it.
 */
export function printableExcerpt(text: string, max = 200): string {
  const cut = text.length > max ? `${Array.from(text).slice(0, max).join("")}…` : text;
  return cut.replace(UNPRINTABLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** HTML for the console: escaping and the page frame (no inline script or style: the CSP forbids both). */
import { printable as corePrintable, printableJsonText } from "@acp/core";

/** Escapes text for HTML content and double-quoted attributes. */
export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

/**
 * Text from an agent or a request, shown: every character `@acp/core`'s `printable` never shows as itself
 * (C0, DEL and C1 controls, the bidirectional controls, zero-width and every other invisible or
 * default-ignorable character — soft hyphen, Hangul fillers, variation selectors, tag characters —, the line
 * and paragraph separators, the spaces other than U+0020, lone surrogates) as a visible `\uXXXX` escape, as
 * the terminal prompt, Telegram and `acp pending` show them. An agent chooses tool names, arguments and
 * (through them) reasons: raw, a right-to-left override could reorder what a person reads
 * ("invoice\u202egpj.exe" shows as "invoiceexe.jpg") and an invisible character could make one tool name or
 * recipient look like another. `static/console.js` uses the same set.
 */
export function printable(text: string): string {
  return corePrintable(text);
}

/** Text from an agent or a request, for HTML: unprintable characters escaped, then HTML-escaped. */
export function show(text: string): string {
  return escapeHtml(printable(text));
}

/**
 * A value as indented JSON with the characters {@link printable} escapes as `\uXXXX` escapes: still valid
 * JSON that parses to the same value (they can only occur inside strings), so the edit box round-trips.
 */
export function jsonText(value: unknown): string {
  // JSON.stringify already escapes C0 inside strings; the line breaks left are the indentation's own
  return printableJsonText(JSON.stringify(value, null, 2) ?? "null");
}

/**
 * A value as indented JSON, escaped, in a box of bounded height (long arguments scroll inside it, so the
 * buttons after it stay near); focusable, so the keyboard can scroll it too.
 */
export function jsonBlock(value: unknown, label = "arguments"): string {
  return `<pre class="json" tabindex="0" aria-label="${escapeHtml(label)}">${escapeHtml(jsonText(value))}</pre>`;
}

/** Which page is open (for the navigation). */
export type ConsolePage = "pending" | "audit" | "simulate" | "none";

const NAV: readonly [ConsolePage, string, string][] = [
  ["pending", "/console/pending", "Pending approvals"],
  ["audit", "/console/audit", "Audit trail"],
  ["simulate", "/console/simulate", "Policy simulator"],
];

/**
 * The page frame: head, navigation, sign-out. The session's CSRF token is never in a page: the sign-in
 * hands it to this origin's script once (see `console.js`), so a page read with a stolen cookie holds no
 * way to answer.
 */
export function renderPage(input: {
  readonly title: string;
  readonly page: ConsolePage;
  readonly body: string;
  /** A signed-in page: navigation, sign-out. */
  readonly signedIn?: boolean;
  /** The name the session was signed in as (`acp console-link --as NAME`). */
  readonly signedInAs?: string;
}): string {
  const signedIn = input.signedIn === true;
  const who =
    input.signedInAs === undefined ? "" : `<span class="signed-in-as">signed in as ${show(input.signedInAs)}</span>`;
  const nav = signedIn
    ? `<nav>${NAV.map(([page, href, label]) => `<a href="${href}"${page === input.page ? ' aria-current="page"' : ""}>${label}</a>`).join("")}
${who}<form method="post" action="/console/logout" class="signout"><input type="hidden" name="csrf" value=""><button type="submit">Sign out</button></form></nav>`
    : "";
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(input.title)} · ACP console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/console/static/console.css">
<script src="/console/static/console.js" defer></script>
</head>
<body data-page="${input.page}">
<header><span class="brand">ACP console</span>${nav}</header>
<main>
${signedIn ? `<noscript><p class="session-ended">This console needs JavaScript to answer requests and to stay live; with it off you can only read.</p></noscript>` : ""}
${input.body}
</main>
</body>
</html>
`;
}

/** The sign-in pages: the one-time link's confirmation and the "sign in first" page. */
import { escapeHtml } from "../html.js";

/** The page a one-time link opens: one button that spends the link (a link preview does not). */
export function renderSignInPage(token: string): string {
  return `<h1>Sign in</h1>
<p>This one-time link signs this browser in to the ACP console.</p>
<form method="post" action="/console/login"><input type="hidden" name="token" value="${escapeHtml(token)}">
<button type="submit" autofocus>Sign in</button></form>`;
}

/** Shown when there is no session, or the link is spent or expired. */
export function renderSignedOutPage(message: string, code?: string): string {
  const named = code === undefined ? "" : ` <small class="code">(${escapeHtml(code)})</small>`;
  return `<h1>Sign in needed</h1>
<p>${escapeHtml(message)}${named}</p>
<p>Open the sign-in link <code>acp serve</code> printed, or run <code>acp console-link</code> for a fresh one.</p>`;
}

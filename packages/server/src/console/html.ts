/** HTML for the console: escaping and the page frame (no inline script or style: the CSP forbids both). */

/** Escapes text for HTML content and double-quoted attributes. */
export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

/** A value as indented JSON, escaped. */
export function jsonBlock(value: unknown): string {
  return `<pre class="json">${escapeHtml(JSON.stringify(value, null, 2) ?? "null")}</pre>`;
}

/** Which page is open (for the navigation). */
export type ConsolePage = "pending" | "audit" | "simulate" | "none";

const NAV: readonly [ConsolePage, string, string][] = [
  ["pending", "/console/pending", "Pending approvals"],
  ["audit", "/console/audit", "Audit trail"],
  ["simulate", "/console/simulate", "Policy simulator"],
];

/** The page frame: head, navigation, the CSRF token for the script, sign-out. */
export function renderPage(input: {
  readonly title: string;
  readonly page: ConsolePage;
  readonly body: string;
  readonly csrfToken?: string;
}): string {
  const signedIn = input.csrfToken !== undefined;
  const nav = signedIn
    ? `<nav>${NAV.map(([page, href, label]) => `<a href="${href}"${page === input.page ? ' aria-current="page"' : ""}>${label}</a>`).join("")}
<form method="post" action="/console/logout" class="signout"><input type="hidden" name="csrf" value="${escapeHtml(input.csrfToken ?? "")}"><button type="submit">Sign out</button></form></nav>`
    : "";
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${signedIn ? `<meta name="csrf-token" content="${escapeHtml(input.csrfToken ?? "")}">` : ""}
<title>${escapeHtml(input.title)} · ACP console</title>
<link rel="stylesheet" href="/console/static/console.css">
<script src="/console/static/console.js" defer></script>
</head>
<body data-page="${input.page}">
<header><span class="brand">ACP console</span>${nav}</header>
<main>
${input.body}
</main>
</body>
</html>
`;
}

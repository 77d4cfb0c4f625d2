/**
 * What the console's pending page shows of a request an attacker shaped (the agent chose the arguments, a
 * malicious upstream the tool's name and description): no markup of theirs becomes an element, every invisible
 * or control character shows as a `\uXXXX` escape (the set the terminal, Telegram and `acp pending` escape),
 * and the card warns of such characters and of a look-alike letter, as those channels do.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SESSION_COOKIE, SESSION_TTL_MS } from "@acp/server";
import { renderConsentCard } from "../src/console/pages/pending.js";
import type { ConsentView } from "../src/service/consent-view.js";
import { eventually, startTestServer, type TestServer } from "./harness.js";

function viewOf(input: {
  tool?: string;
  server?: string;
  parameters?: Record<string, unknown>;
  description?: string;
  reasons?: unknown[];
}): ConsentView {
  const tool = input.tool ?? "send_email";
  const server = input.server ?? "mail";
  return {
    id: "cr_0123456789abcdef0123456789abcdef",
    status: "pending",
    server,
    tool,
    session_id: null,
    created_at: "2026-01-15T12:00:00.000Z",
    expires_at: "2026-01-15T12:02:00.000Z",
    decided_at: null,
    request: {
      agent: { id: "a", name: "agent" },
      action: {
        tool,
        server,
        category: "communication",
        risk_level: "high",
        parameters: input.parameters ?? { to: "ana@corp.test" },
        description: input.description ?? "",
      },
      policy: { rule_id: "policy:ask-mail" },
    },
    reasons: input.reasons ?? [{ source: "policy", code: "rule_matched", message: "rule `ask-mail` matched: ask" }],
    answer: null,
  };
}

/** Characters a look-alike or a reordering is built with; none may reach the page raw. */
const UNSHOWN = [
  "\u00ad", // soft hyphen
  "\u00a0", // no-break space
  "\u3164", // Hangul filler
  "\ufe0f", // variation selector
  "\u180e", // Mongolian vowel separator
  "\u2028", // line separator
  "\u2063", // invisible separator
  "\u3000", // ideographic space
  "\u{e0041}", // tag latin capital A
  "\u202e", // right-to-left override
  "\u200b", // zero-width space
];

/** The text of the card's `<pre class="json">` block (the arguments shown), unescaped from HTML. */
function shownJson(card: string): string {
  const html = /<pre class="json"[^>]*>([\s\S]*?)<\/pre>/.exec(card)?.[1] ?? "";
  return html
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");
}

describe("the console's pending card, for a request an attacker shaped", () => {
  it("shows every invisible or control character escaped, in the tool name and the arguments, as the terminal does", () => {
    for (const c of UNSHOWN) {
      const parameters = { to: `ceo@corp.test${c}` };
      const card = renderConsentCard(viewOf({ tool: `send_email${c}`, parameters, description: `sends${c}` }));
      expect(card).not.toContain(c);
      const escaped = Array.from({ length: c.length }, (_, i) => `\\u${c.charCodeAt(i).toString(16).padStart(4, "0")}`);
      expect(card).toContain(`send_email${escaped.join("")}`);
      // the arguments block is still JSON of the same value (the edit box starts from it)
      expect(JSON.parse(shownJson(card))).toEqual(parameters);
    }
  });

  it("warns of characters shown escaped and where, and of a look-alike letter in the tool or the arguments", () => {
    const hidden = renderConsentCard(viewOf({ tool: "send\u200b_email", parameters: { to: "ceo@corp.test\u00a0" } }));
    expect(hidden).toMatch(
      /<p class="warning" data-role="warning">warning: invisible or control characters in tool, arguments, shown as \\uXXXX escapes/,
    );
    const tool = renderConsentCard(viewOf({ tool: "r\u0435ad_file" }));
    expect(tool).toContain(
      "warning: a look-alike letter in tool: <code>\u0435</code> (U+0435) reads as <code>e</code>",
    );
    const recipient = renderConsentCard(viewOf({ parameters: { message: { to: "\u0430lice@corp.test" } } }));
    expect(recipient).toContain("warning: a look-alike letter in arguments: <code>\u0430</code> (U+0430)");
    // plain ASCII, accented Latin and a line break inside a value: nothing to warn of
    const plain = renderConsentCard(viewOf({ parameters: { to: "zoë.café@corp.test", body: "hi\nbye" } }));
    expect(plain).not.toContain('class="warning"');
  });

  it("shortens arguments too long for a page value by value: a huge first value cannot push the recipient out", () => {
    const card = renderConsentCard(viewOf({ parameters: { body: "A".repeat(1_000_000), to: "mallory@evil.test" } }));
    expect(card.length).toBeLessThan(100_000);
    const line = (path: string, value: string): string =>
      `<li><bdi dir="ltr" class="path">${path}</bdi>: <bdi dir="ltr" class="value">${value}</bdi></li>`;
    expect(card).toContain(line("to", "&quot;mallory@evil.test&quot;"));
    expect(card).toMatch(
      /<bdi dir="ltr" class="path">body<\/bdi>: <bdi dir="ltr" class="value">&quot;A+…\[\d+ characters not shown\]…A+&quot;<\/bdi><\/li>/,
    );
    // the whole value is not in the page: no control to show it
    expect(card).not.toContain("show all");
    expect(card).toContain("acp pending --json");
    expect(card).not.toContain('data-role="arguments"');
  });

  it("shows each value on its own line, a long one by its ends with a control to show it all, each isolated", () => {
    const body = `${"A".repeat(5_000)} and wire it to mallory`;
    const card = renderConsentCard(viewOf({ parameters: { body, "\u05d0": "\u05d1", to: "ana@corp.test" } }));
    const list = /<ul class="args"[^>]*>([\s\S]*?)<\/ul>/.exec(card)?.[1] ?? "";
    const items = list.split("</li>").filter((item) => item !== "");
    expect(items).toHaveLength(3);
    expect(items[0]).toMatch(
      /^<li><bdi dir="ltr" class="path">body<\/bdi>: <bdi dir="ltr" class="value">&quot;A+…\[\d+ characters not shown\]…A+ and wire it to mallory&quot;<\/bdi><details class="whole"><summary>show all 5025 characters<\/summary><pre class="whole" dir="ltr">&quot;A{5000} and wire it to mallory&quot;<\/pre><\/details>$/,
    );
    expect(items[1]).toBe(
      '<li><bdi dir="ltr" class="path">[&quot;\u05d0&quot;]</bdi>: <bdi dir="ltr" class="value">&quot;\u05d1&quot;</bdi>',
    );
    expect(items[2]).toBe(
      '<li><bdi dir="ltr" class="path">to</bdi>: <bdi dir="ltr" class="value">&quot;ana@corp.test&quot;</bdi>',
    );
    expect(card).toContain(`open "show all" to read it whole`);
    // short arguments: no control, no such hint; the JSON is still in the page, folded
    const short = renderConsentCard(viewOf({ parameters: { to: "ana@corp.test" } }));
    expect(short).not.toContain("show all");
    expect(short).toContain('<details class="as-json"><summary>All arguments as JSON</summary>');
  });

  it("turns no markup of the agent's or the upstream's into an element", () => {
    const markup = `"><img src=x onerror=alert(1)><a href="https://evil.test">ok</a><script>alert(2)</script>`;
    const card = renderConsentCard(
      viewOf({
        tool: `send${markup}`,
        server: `mail${markup}`,
        description: `sends \`x${markup}\``,
        parameters: { [`to${markup}`]: markup },
        reasons: [{ source: "session", code: `c${markup}`, message: `quoted \`${markup}\``, rule: `r${markup}` }],
      }),
    );
    for (const tag of ["<img", "<script", "<a href", "onerror=alert(1)>"]) expect(card).not.toContain(tag);
    expect(card).toContain("&lt;img src=x onerror=alert(1)&gt;");
  });
});

describe("the console's pending page over HTTP", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(async () => {
    await s?.close();
  });

  it("is served with a CSP that runs no inline script, and shows the arguments escaped and warned of", async () => {
    const controller = new AbortController();
    const path = "/tmp/\u0430udit.txt\u00ad<script>alert(1)</script>";
    const waiting = fetch(`${s.url}/v1/decide?wait=true`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ tool: "write_file", arguments: { path, content: "x" } }),
      signal: controller.signal,
    }).catch(() => undefined);
    try {
      await eventually(async () => ((await s.stores.pending.listPending(Date.now())).length >= 1 ? true : undefined));
      const { id } = await s.stores.consoleAuth.createSession(Date.now(), SESSION_TTL_MS);
      const answer = await fetch(`${s.url}/console/pending`, { headers: { cookie: `${SESSION_COOKIE}=${id}` } });
      expect(answer.headers.get("content-security-policy")).toMatch(/script-src 'self'(;|$)/);
      expect(answer.headers.get("content-security-policy")).toContain("default-src 'none'");
      const page = await answer.text();
      expect(page).not.toContain("<script>alert(1)");
      expect(page).not.toContain("\u00ad");
      expect(page).toContain("\\u00ad&lt;script&gt;alert(1)&lt;/script&gt;");
      expect(page).toContain("warning: invisible or control characters in arguments");
      expect(page).toContain("warning: a look-alike letter in arguments: <code>\u0430</code>");
    } finally {
      controller.abort();
      await waiting;
    }
  });
});

/** The pending approvals page: what each agent wants, its arguments (secrets redacted), why ACP asks. */
import { argumentsCharacters, argumentsView, elide, warningsFor } from "@acp/proxy";
import type { ConsentShortened } from "../../service/consent-listing.js";
import type { ConsentView } from "../../service/consent-view.js";
import { escapeHtml, jsonBlock, jsonText, show } from "../html.js";

/**
 * A request as a card shows it: whole (`shortened` absent or null), or as `GET /v1/consent` lists it
 * (`listConsent`: its arguments cut to their first values, long texts by their ends, and `shortened` saying so).
 */
export type CardView = ConsentView & {
  readonly shortened?: ConsentShortened | null;
  /**
   * The request whole, for the warnings only (hidden characters, look-alike letters), when the card shows it
   * shortened: a character in a part left out is still warned of before the buttons.
   */
  readonly warnWith?: ConsentView;
};

interface RequestShape {
  agent?: { name?: unknown; id?: unknown };
  action?: {
    tool?: unknown;
    server?: unknown;
    category?: unknown;
    risk_level?: unknown;
    parameters?: unknown;
    description?: unknown;
  };
  policy?: { rule_id?: unknown };
}

interface ReasonShape {
  source?: unknown;
  code?: unknown;
  message?: unknown;
  rule?: unknown;
}

function text(value: unknown, fallback = ""): string {
  return typeof value === "string" ? value : fallback;
}

const ACTION_WORDS: Readonly<Record<string, string>> = {
  ask: "ask a person first",
  deny: "refuse it",
  allow: "let it run",
};

/** A pipeline message with its `quoted` names set as code (the text escaped first). */
function withCode(message: string): string {
  return show(message).replace(/`([^`]*)`/g, "<code>$1</code>");
}

/** One reason in words a person reads: the policy's own reasons spelled out, any other as its message. */
function reasonText(r: ReasonShape): string {
  const message = text(r.message, text(r.code, "unknown reason"));
  const action = /: (ask|deny|allow)$/.exec(message)?.[1] ?? /`(ask|deny|allow)`$/.exec(message)?.[1];
  if (r.source === "policy" && r.code === "rule_matched" && typeof r.rule === "string" && action !== undefined) {
    return `Your policy's rule <code>${show(r.rule)}</code> matched this call; it says to ${ACTION_WORDS[action]}.`;
  }
  if (r.source === "policy" && r.code === "default_action" && action !== undefined) {
    return `No rule of your policy matched this call; its default is to ${ACTION_WORDS[action]}.`;
  }
  const rule =
    typeof r.rule === "string" && !message.includes(r.rule)
      ? ` <span class="rule">(rule <code>${show(r.rule)}</code>)</span>`
      : "";
  return `${withCode(message)}${rule}`;
}

function renderReasons(reasons: unknown): string {
  if (!Array.isArray(reasons) || reasons.length === 0) return "<p>No reason was recorded.</p>";
  const items = (reasons as ReasonShape[]).map(
    (r) => `<li>${reasonText(r)} <span class="source">— ${show(text(r.source, "pipeline"))}</span></li>`,
  );
  return `<ul class="reasons">${items.join("")}</ul>`;
}

/**
 * Arguments longer than this (characters of their JSON) are shown cut, and cannot be edited in the page:
 * an agent's megabyte-sized arguments would otherwise make every page of pending requests that much
 * larger (twice: shown and in the edit box), until the console cannot be loaded or answered.
 */
export const SHOWN_ARGUMENTS_MAX = 64 * 1024;

/**
 * How the arguments are shown: one value a line by its path, as the terminal shows them, a value longer than
 * 300 characters keeping its start and its end with how much of its middle is not shown; within
 * {@link SHOWN_ARGUMENTS_MAX} characters, the values beyond counted.
 */
const SHOWN_VALUES = { maxValue: 300, maxLines: 200, maxChars: SHOWN_ARGUMENTS_MAX } as const;

/**
 * How a shortened card (a listed request) shows its arguments: the listing already cut each long text to its
 * ends with the count of its hidden middle (512 characters), so a value is not cut again here (its count would
 * then be of the listed text, not of the request's).
 */
const LISTED_VALUES = { maxValue: 4096, maxLines: 200, maxChars: SHOWN_ARGUMENTS_MAX } as const;

/**
 * The arguments one value a line, in the card itself (no scroll box a person may not scroll): `path: value`, the
 * path and the value each in `<bdi dir="ltr">`, laid out on their own (right-to-left text in one cannot move
 * the other, nor the `: ` between them: `["א"]: "ב"` is not shown as `"ב" :["א"]`). A shortened value says how
 * much of its middle is hidden, and, when the page holds it (`whole`), has a "show all N characters" control.
 */
function valueList(
  params: Record<string, unknown>,
  whole: boolean,
  limits: typeof SHOWN_VALUES | typeof LISTED_VALUES = SHOWN_VALUES,
): { readonly html: string; readonly cut: boolean } {
  const view = argumentsView(params, limits);
  const lines = view.items.map((item) => {
    const value = `<bdi dir="ltr" class="value">${escapeHtml(item.value)}</bdi>`;
    const line = item.path === "" ? value : `<bdi dir="ltr" class="path">${escapeHtml(item.path)}</bdi>: ${value}`;
    const all =
      whole && item.value !== item.whole
        ? `<details class="whole"><summary>show all ${item.whole.length} characters</summary><pre class="whole" dir="ltr">${escapeHtml(item.whole)}</pre></details>`
        : "";
    return `<li>${line}${all}</li>`;
  });
  if (view.more !== undefined) lines.push(`<li class="more">${escapeHtml(view.more)}</li>`);
  const list = `<ul class="args" data-role="args" aria-label="arguments">${lines.join("")}</ul>`;
  return { html: list, cut: view.shortened };
}

/**
 * The arguments block and the edit box of a card (shortened, and no edit box, when too long). Shortened value
 * by value as the other channels shorten them, not as the JSON's first 64 KiB: a huge first value would
 * otherwise push a recipient after it (`{"body": "AAAA…", "to": "mallory@evil.test"}`) out of the page. Within
 * {@link SHOWN_ARGUMENTS_MAX} the whole JSON is in the page too, folded, and in the edit box.
 */
function argumentsBlocks(
  params: unknown,
  shortened: ConsentShortened | null,
): { readonly shown: string; readonly edit: string } {
  const record = typeof params === "object" && params !== null && !Array.isArray(params);
  if (shortened !== null) return shortenedBlocks(params, record, shortened);
  const full = jsonText(params);
  if (full.length > SHOWN_ARGUMENTS_MAX) {
    const shown = record
      ? valueList(params as Record<string, unknown>, false).html
      : `<pre class="json" tabindex="0" aria-label="arguments (shortened)">${escapeHtml(elide(full, SHOWN_ARGUMENTS_MAX))}</pre>`;
    return {
      shown: `${shown}
<p class="hint cut" data-role="cut">${full.length} characters of arguments: too long to show whole in a page. Each value is on its own line by its path, a long one with its start and its end (…[N characters not shown]…). Read them in full with <code>acp pending --json</code> before you approve, or deny.</p>`,
      edit: `<p class="hint">These arguments are too long to edit here.</p>`,
    };
  }
  const list = record ? valueList(params as Record<string, unknown>, true) : undefined;
  const shown =
    list === undefined
      ? jsonBlock(params)
      : `${list.html}
${list.cut ? `<p class="hint cut" data-role="cut">A long value shows its start and its end with how much of its middle is hidden (…[N characters not shown]…): open "show all" to read it whole.</p>\n` : ""}<details class="as-json"><summary>All arguments as JSON</summary>
${jsonBlock(params)}
</details>`;
  return {
    shown,
    edit: `<details class="edit"><summary>Approve with edited arguments</summary>
<p class="hint">Change a value or add an argument; an argument cannot be removed (deny instead). Approves this call once.</p>
<textarea data-role="arguments" rows="6" spellcheck="false" aria-label="edited arguments">${escapeHtml(full)}</textarea>
<pre class="diff" data-role="diff" aria-live="polite"></pre>
<button type="button" data-action="modify">Approve with these arguments</button>
</details>`,
  };
}

/**
 * The arguments block and the edit box of a card listed shortened: what the listing kept, said plainly to be a
 * part, before the buttons, with a control that loads the whole request into this card (the console's script:
 * `GET /console/fragments/consent/{id}`). The edit box needs the whole arguments: it loads them first.
 */
function shortenedBlocks(
  params: unknown,
  record: boolean,
  shortened: ConsentShortened,
): { readonly shown: string; readonly edit: string } {
  const shown = record ? valueList(params as Record<string, unknown>, false, LISTED_VALUES).html : jsonBlock(params);
  const after = shortened.arguments_cut ? ", and arguments after the last value shown are not listed here" : "";
  return {
    shown: `${shown}
<p class="warning shortened" data-role="shortened">Only part of this request is shown: ${shortened.omitted_bytes} bytes are left out${after} (a long text shows its start and its end). Show it whole before you approve.
<button type="button" data-action="load-whole">Show the whole request</button></p>`,
    edit: `<details class="edit"><summary>Approve with edited arguments</summary>
<p class="hint">Editing needs the whole arguments, and this card shows part of them.</p>
<button type="button" data-action="load-whole">Show the whole request to edit it</button>
</details>`,
  };
}

/**
 * The warnings the terminal, Telegram and `acp pending` give, for the card: characters shown as `\uXXXX`
 * escapes (and where), a look-alike letter in a name or an argument (a Cyrillic `а` in `аlice@corp.test`, a tool
 * `rеad_file`). An escape inside a long JSON block is easy to skim past, and a look-alike is not visible at all.
 */
function renderWarnings(view: ConsentView, request: RequestShape, agent: string, params: unknown): string {
  const fields = [
    ["server", view.server],
    ["tool", view.tool],
    ["agent", agent],
    ["rule", request.policy?.rule_id],
    ["description", request.action?.description ?? ""],
  ] as const;
  const reasons = Array.isArray(view.reasons) ? (view.reasons as unknown[]) : [];
  // the card says itself when it cut the arguments (and how much)
  const warnings = warningsFor(fields, reasons, { ...argumentsCharacters(params), shortened: false });
  return warnings.map((w) => `<p class="warning" data-role="warning">${withCode(w)}</p>`).join("\n");
}

/** A request's warnings (of the request as given: whole, or as listed). */
function warningsOf(view: ConsentView): string {
  const request = (typeof view.request === "object" && view.request !== null ? view.request : {}) as RequestShape;
  const agent = text(request.agent?.name, text(request.agent?.id, "an agent"));
  return renderWarnings(view, request, agent, request.action?.parameters ?? {});
}

/** One request as a card with its actions (the script wires the buttons). */
export function renderConsentCard(view: CardView): string {
  const request = (typeof view.request === "object" && view.request !== null ? view.request : {}) as RequestShape;
  const action = request.action ?? {};
  const agent = text(request.agent?.name, text(request.agent?.id, "an agent"));
  const params = action.parameters ?? {};
  const id = escapeHtml(view.id);
  const session =
    view.session_id === null ? "" : ` · agent session <code class="session">${show(view.session_id)}</code>`;
  const risk = text(action.risk_level, "unknown");
  const blocks = argumentsBlocks(params, view.shortened ?? null);
  const mark = view.shortened != null ? ` data-shortened="true"` : "";
  return `<article class="card" data-consent-id="${id}"${mark} data-expires="${escapeHtml(view.expires_at)}" aria-labelledby="h-${id}">
<h2 id="h-${id}"><span class="agent">${show(agent)}</span> wants to run <code class="tool">${show(view.tool)}</code> on <code>${show(view.server)}</code></h2>
<p class="meta"><span class="badge risk-${escapeHtml(risk.replace(/[^a-z]/g, ""))}">${show(risk)} risk</span>
 <span class="badge">${show(text(action.category, "uncategorised"))}</span> <span class="id">${id}</span>${session} · expires <time datetime="${escapeHtml(view.expires_at)}" data-role="expires">${escapeHtml(view.expires_at)}</time></p>
${typeof action.description === "string" && action.description !== "" ? `<p class="description">${withCode(action.description)}</p>` : ""}
${warningsOf(view.warnWith ?? view)}
<h3>Why ACP is asking</h3>
${renderReasons(view.reasons)}
<h3>Arguments <small>(secrets shown as [redacted]; unprintable characters as \\u escapes)</small></h3>
${blocks.shown}
<div class="actions">
<button type="button" data-action="approve" data-scope="once">Approve once</button>
<button type="button" data-action="approve" data-scope="session">Approve for this session</button>
<span class="window"><select data-role="window" aria-label="approval window"><option value="10m">10 minutes</option><option value="1h">1 hour</option><option value="8h">8 hours</option><option value="1d">1 day</option></select>
<button type="button" data-action="approve" data-scope="window">Approve for a while</button></span>
</div>
<p class="hint">"For this session" and "for a while" also let later calls of <code>${show(view.tool)}</code> with exactly these arguments run without asking, for this agent only: in this agent session for up to 12 hours, or in any of its sessions until the time you pick. Any other arguments, or another agent, ask again.</p>
${blocks.edit}
<div class="deny"><input type="text" data-role="reason" maxlength="500" placeholder="Reason (told to the agent)" aria-label="deny reason">
<button type="button" data-action="deny" class="danger">Deny</button></div>
<p class="status" data-role="status" role="status" tabindex="-1"></p>
</article>`;
}

/** What the pending page shows: a page of the waiting requests, oldest first, and how many wait in all. */
export interface PendingPageView {
  /** The page's requests, as listed (`listConsent`). */
  readonly cards: readonly CardView[];
  /** How many requests are waiting in all (this page's included). */
  readonly waiting: number;
  /** The cursor of the next page, null after the last. */
  readonly next: string | null;
  /** This page starts after a cursor (not at the oldest request). */
  readonly paged: boolean;
  /** The address's cursor was not one of this console's: the page starts at the oldest instead. */
  readonly badCursor?: boolean;
}

/** The list of cards (also served alone, for the live refresh). */
export function renderPendingList(views: readonly CardView[]): string {
  if (views.length === 0) return `<p class="empty">Nothing is waiting for you.</p>`;
  return views.map(renderConsentCard).join("\n");
}

/**
 * The line under the list saying how many requests wait in all and how to page on (also in the live
 * refresh, which replaces it): a page holds a bounded number of requests, so a flood of them is never
 * loaded whole, and none is out of sight without the page saying so.
 */
export function renderPendingMore(page: PendingPageView): string {
  const shown = page.cards.length;
  const waiting = Math.max(page.waiting, shown);
  const parts: string[] = [];
  if (page.badCursor === true)
    parts.push("That page address is not one of this console's: the oldest requests are shown.");
  if (page.paged)
    parts.push(
      `${waiting} ${waiting === 1 ? "request is" : "requests are"} waiting in all; this page shows ${shown} of them.`,
    );
  else if (waiting > shown)
    parts.push(`${shown} of ${waiting} waiting requests shown, the oldest first: ${waiting - shown} more waiting.`);
  const links: string[] = [];
  if (page.next !== null)
    links.push(`<a href="/console/pending?after=${encodeURIComponent(page.next)}" data-role="next-page">Next page</a>`);
  if (page.paged) links.push(`<a href="/console/pending" data-role="first-page">Back to the oldest</a>`);
  const text = [...parts.map(escapeHtml), ...links].join(" ");
  // data-others: the waiting requests not on this page (the tab's title counts them with the page's own)
  return `<p class="more-waiting" data-role="more" data-waiting="${waiting}" data-others="${waiting - shown}"${text === "" ? " hidden" : ""}>${text}</p>`;
}

/** The live refresh's answer: the page's cards, then the line of {@link renderPendingMore}. */
export function renderPendingFragment(page: PendingPageView): string {
  return `${renderPendingList(page.cards)}\n${renderPendingMore(page)}`;
}

/** The page body. */
export function renderPendingPage(page: PendingPageView): string {
  return `<h1>Pending approvals</h1>
<p class="live" data-role="live">Live: new requests appear here as agents ask.</p>
<p class="visually-hidden" data-role="announce" aria-live="polite"></p>
<section id="pending-list" aria-label="pending requests">
${renderPendingList(page.cards)}
</section>
${renderPendingMore(page)}`;
}

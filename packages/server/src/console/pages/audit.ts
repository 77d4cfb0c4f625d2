/** The audit trail page: the chain's status (the first broken event, what the lines after it tell), a search, the events. */
import { AUDIT_EVENT_TYPES, type AuditVerification } from "@acp/core";
import type { AuditPage } from "../../store/types.js";
import { escapeHtml, jsonText, show } from "../html.js";

/** The search as typed (echoed into the form). */
export interface AuditSearch {
  readonly q?: string;
  readonly event_type?: string;
  readonly tool?: string;
  readonly decision?: string;
}

function renderVerification(v: AuditVerification): string {
  if (v.ok) {
    const signed = v.signaturesChecked ? `, ${v.checkpoints} signed checkpoint(s) checked` : "";
    return `<p class="chain ok" data-role="chain-status">Chain verified: ${v.count} event(s) intact${signed}.</p>`;
  }
  const p = v.problem;
  // a problem of no line (line 0: the anchor missing while its marker says it was there) names no event to show
  const lineless = p !== null && p.line === 0;
  const where =
    p === null
      ? ""
      : lineless
        ? ` The anchor (${show(p.code)}): ${show(p.message)}.`
        : ` First broken event: line ${p.line} (${show(p.code)}): ${show(p.message)}.`;
  // the broken line may be on an older page, or hidden by the search: a link shows it, unfiltered
  const link =
    p === null || lineless
      ? ""
      : ` <a href="/console/audit?before=${p.line + 1}#line-${p.line}">Show the first broken event (line ${p.line})</a>`;
  return `<p class="chain broken" data-role="chain-status">Chain BROKEN after ${v.count} intact event(s).${where}${link}</p>${renderAfterProblem(v)}`;
}

/**
 * What the verifier could still tell of the lines after the first problem (`afterProblem`, as `acp audit
 * verify` and `GET /v1/audit/verify` report it): it never makes the chain intact.
 */
function renderAfterProblem(v: AuditVerification): string {
  const after = v.afterProblem;
  if (after === null) return "";
  const anchorProblem = v.problem?.where === "anchor";
  const what = anchorProblem ? "The log" : "After it";
  const stopped = after.complete ? "" : " (reading stopped at a line too long to read)";
  const signed =
    after.signedCheckpoints === null
      ? `${after.checkpoints} checkpoint(s), signatures not checked (no public key)`
      : `${after.checkpoints} checkpoint(s), ${after.signedCheckpoints} signed with the key`;
  const anchor =
    after.anchor === null
      ? ""
      : after.anchor.line === null
        ? ` The anchor's checkpoint (line ${after.anchor.expectedLine}) is not among them: the log was also cut or rewritten after the problem.`
        : after.anchor.line === after.anchor.expectedLine
          ? ` The anchor's checkpoint is at its line, ${after.anchor.line}.`
          : ` The anchor's checkpoint (line ${after.anchor.expectedLine} by its own count) is at line ${after.anchor.line}: lines were inserted or removed before it.`;
  return `<p class="chain broken" data-role="after-problem">${what}: ${after.lines} line(s), ${after.linked} linked to the line before${stopped}; ${signed}.${anchor} Lines after a break are vouched for by their own content only: the chain is not intact.</p>`;
}

function field(name: keyof AuditSearch, label: string, search: AuditSearch, list?: string): string {
  const suggest = list === undefined ? "" : ` list="${list}"`;
  return `<label>${label} <input type="search" name="${name}"${suggest} value="${escapeHtml(search[name] ?? "")}"></label>`;
}

/** The filters match exactly: the event type is picked from the known ones, the decision is suggested. */
function eventTypeField(search: AuditSearch): string {
  const chosen = search.event_type ?? "";
  const known: readonly string[] = AUDIT_EVENT_TYPES;
  const types = known.includes(chosen) || chosen === "" ? known : [...known, chosen];
  const options = types.map(
    (t) => `<option value="${escapeHtml(t)}"${t === chosen ? " selected" : ""}>${escapeHtml(t)}</option>`,
  );
  return `<label>Event type <select name="event_type"><option value="">any</option>${options.join("")}</select></label>`;
}

const DECISIONS = [
  "accept",
  "ask",
  "defer",
  "refuse",
  "requested",
  "approved",
  "approved_with_modifications",
  "denied",
  "expired",
  "withdrawn",
];
const DECISION_LIST = `<datalist id="audit-decisions">${DECISIONS.map((d) => `<option value="${d}"></option>`).join("")}</datalist>`;

function searchParams(search: AuditSearch): URLSearchParams {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(search)) if (typeof v === "string" && v !== "") params.set(k, v);
  return params;
}

/** Links to the newest page (when this is an older one) and to the next older page (when there is one). */
function pager(page: AuditPage, search: AuditSearch, before: number | undefined): string {
  const links: string[] = [];
  if (before !== undefined) {
    const newest = searchParams(search).toString();
    links.push(`<a href="/console/audit${newest === "" ? "" : `?${escapeHtml(newest)}`}">Newest events</a>`);
  }
  if (page.next !== null) {
    const params = searchParams(search);
    params.set("before", String(page.next));
    links.push(`<a href="/console/audit?${escapeHtml(params.toString())}">Older events</a>`);
  }
  return links.length === 0 ? "" : `<p class="pager">${links.join(" · ")}</p>`;
}

function isFiltered(search: AuditSearch): boolean {
  return Object.values(search).some((v) => typeof v === "string" && v !== "");
}

/**
 * The broken line, when this page spans it but the store could not list it (a line that is not JSON, or
 * not an event): a row that says so, so the highlighted line is never just missing.
 */
function unreadableRow(
  page: AuditPage,
  verification: AuditVerification,
  search: AuditSearch,
  before: number | undefined,
): { line: number; html: string } | null {
  const p = verification.problem;
  if (verification.ok || p === null || isFiltered(search)) return null;
  if (page.events.some((e) => e.line === p.line)) return null;
  const newest = before ?? Number.POSITIVE_INFINITY;
  const oldest = page.next ?? 1;
  if (!(p.line < newest && p.line >= oldest)) return null;
  return {
    line: p.line,
    html: `<tr class="broken" id="line-${p.line}"><td data-label="#">${p.line}</td><td colspan="7" data-label="Event">unreadable event (${show(p.code)}): ${show(p.message)}</td></tr>`,
  };
}

/** The page body. */
export function renderAuditPage(
  page: AuditPage,
  verification: AuditVerification,
  search: AuditSearch,
  before?: number,
): string {
  const broken = verification.ok ? undefined : verification.problem?.line;
  const rows = page.events.map(({ line, event }) => {
    const cls = broken === line ? ' class="broken"' : "";
    return `<tr${cls} id="line-${line}"><td data-label="#">${line}</td><td data-label="Time"><time>${show(event.timestamp)}</time></td><td data-label="Event">${show(event.event_type)}</td>
<td data-label="Agent">${show(event.agent ?? "")}</td><td data-label="Tool"><code>${show(event.tool ?? "")}</code></td><td data-label="Decision">${show(event.decision ?? "")}</td>
<td data-label="Rule">${show(event.policy_rule ?? "")}</td><td data-label="Request" class="req">${show(event.request_id ?? "")}</td></tr>
<tr class="event-details${broken === line ? " broken" : ""}"><td colspan="8"><details><summary>Event ${line} in full</summary><pre class="json" tabindex="0" aria-label="event ${line}">${escapeHtml(jsonText(event))}</pre></details></td></tr>`;
  });
  const unreadable = unreadableRow(page, verification, search, before);
  if (unreadable !== null) {
    const at = page.events.findIndex((e) => e.line < unreadable.line);
    rows.splice(at === -1 ? rows.length : at, 0, unreadable.html);
  }
  return `<h1>Audit trail</h1>
${renderVerification(verification)}
<form method="get" action="/console/audit" class="search">
${field("q", "Text", search)}${eventTypeField(search)}${field("tool", "Tool", search)}${field("decision", "Decision", search, "audit-decisions")}${DECISION_LIST}
<button type="submit">Search</button></form>
<p>${page.total} event(s) in the chain; showing ${page.events.length}, newest first.</p>
<div class="table-wrap"><table><thead><tr><th>#</th><th>Time</th><th>Event</th><th>Agent</th><th>Tool</th><th>Decision</th><th>Rule</th><th>Request</th></tr></thead>
<tbody>${rows.join("\n")}</tbody></table></div>
${pager(page, search, before)}`;
}

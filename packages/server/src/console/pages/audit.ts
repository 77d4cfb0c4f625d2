/** The audit trail page: the chain's status (and the first broken event), a search, the events. */
import type { AuditVerification } from "@acp/core";
import type { AuditPage } from "../../store/types.js";
import { escapeHtml } from "../html.js";

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
  const where =
    p === null ? "" : ` First broken event: line ${p.line} (${escapeHtml(p.code)}): ${escapeHtml(p.message)}.`;
  return `<p class="chain broken" data-role="chain-status">Chain BROKEN after ${v.count} intact event(s).${where}</p>`;
}

function field(name: keyof AuditSearch, label: string, search: AuditSearch): string {
  return `<label>${label} <input type="search" name="${name}" value="${escapeHtml(search[name] ?? "")}"></label>`;
}

function nextLink(page: AuditPage, search: AuditSearch): string {
  if (page.next === null) return "";
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(search)) if (typeof v === "string" && v !== "") params.set(k, v);
  params.set("before", String(page.next));
  return `<p><a href="/console/audit?${escapeHtml(params.toString())}">Older events</a></p>`;
}

/** The page body. */
export function renderAuditPage(page: AuditPage, verification: AuditVerification, search: AuditSearch): string {
  const broken = verification.problem?.line;
  const rows = page.events.map(({ line, event }) => {
    const cls = broken === line ? ' class="broken"' : "";
    return `<tr${cls}><td>${line}</td><td><time>${escapeHtml(event.timestamp)}</time></td><td>${escapeHtml(event.event_type)}</td>
<td>${escapeHtml(event.agent ?? "")}</td><td><code>${escapeHtml(event.tool ?? "")}</code></td><td>${escapeHtml(event.decision ?? "")}</td>
<td>${escapeHtml(event.policy_rule ?? "")}</td><td class="req">${escapeHtml(event.request_id ?? "")}</td></tr>`;
  });
  return `<h1>Audit trail</h1>
${renderVerification(verification)}
<form method="get" action="/console/audit" class="search">
${field("q", "Text", search)}${field("event_type", "Event type", search)}${field("tool", "Tool", search)}${field("decision", "Decision", search)}
<button type="submit">Search</button></form>
<p>${page.total} event(s) in the chain; showing ${page.events.length}, newest first.</p>
<div class="table-wrap"><table><thead><tr><th>#</th><th>Time</th><th>Event</th><th>Agent</th><th>Tool</th><th>Decision</th><th>Rule</th><th>Request</th></tr></thead>
<tbody>${rows.join("\n")}</tbody></table></div>
${nextLink(page, search)}`;
}

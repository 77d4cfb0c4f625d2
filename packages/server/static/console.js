/* global document, EventSource -- a browser script */
// The ACP console's one script: live pending list, approve/deny actions, argument diff, simulator.
// Loaded from 'self' only (the CSP forbids inline script). Every state change carries the CSRF token.
"use strict";

(function () {
  const csrfMeta = document.querySelector('meta[name="csrf-token"]');
  const csrf = csrfMeta ? csrfMeta.getAttribute("content") : "";

  async function postJson(url, body) {
    const res = await fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "content-type": "application/json", "x-csrf-token": csrf },
      body: JSON.stringify(body),
    });
    const data = await res.json().catch(() => ({}));
    if (!res.ok) throw new Error((data.error && data.error.message) || "request failed (" + res.status + ")");
    return data;
  }

  function show(el, text, kind) {
    if (!el) return;
    el.textContent = text;
    el.className = "status " + (kind || "");
  }

  // A top-level diff of edited arguments against the shown ones: "- key: old" / "+ key: new".
  function diffLines(before, after) {
    const keys = Array.from(new Set(Object.keys(before).concat(Object.keys(after)))).sort();
    const lines = [];
    for (const k of keys) {
      const a = JSON.stringify(before[k]);
      const b = JSON.stringify(after[k]);
      if (a === b) continue;
      if (a !== undefined) lines.push("- " + k + ": " + a);
      if (b !== undefined) lines.push("+ " + k + ": " + b);
    }
    return lines;
  }

  function parseObject(text) {
    const v = JSON.parse(text);
    if (typeof v !== "object" || v === null || Array.isArray(v)) throw new Error("the arguments must be a JSON object");
    return v;
  }

  function changedArguments(card) {
    const area = card.querySelector('[data-role="arguments"]');
    const before = JSON.parse(area.defaultValue);
    const after = parseObject(area.value);
    const out = {};
    for (const k of Object.keys(after)) if (JSON.stringify(before[k]) !== JSON.stringify(after[k])) out[k] = after[k];
    return { before, after, changes: out };
  }

  function updateDiff(card) {
    const target = card.querySelector('[data-role="diff"]');
    try {
      const { before, after } = changedArguments(card);
      const lines = diffLines(before, after);
      target.textContent = lines.length === 0 ? "(no change yet)" : lines.join("\n");
    } catch (e) {
      target.textContent = "invalid JSON: " + e.message;
    }
  }

  async function act(card, button) {
    const id = card.getAttribute("data-consent-id");
    const status = card.querySelector('[data-role="status"]');
    const kind = button.getAttribute("data-action");
    let body;
    if (kind === "deny") {
      const reason = card.querySelector('[data-role="reason"]').value.trim();
      body = reason === "" ? { decision: "denied" } : { decision: "denied", reason: reason };
    } else if (kind === "modify") {
      let changes;
      try {
        changes = changedArguments(card).changes;
      } catch (e) {
        return show(status, "Invalid arguments: " + e.message, "error");
      }
      if (Object.keys(changes).length === 0) return show(status, "Edit an argument first (or approve as is).", "error");
      body = { decision: "approved_with_modifications", modifications: changes };
    } else {
      const scope = button.getAttribute("data-scope");
      if (scope === "window")
        body = { decision: "approved", scope: { for: card.querySelector('[data-role="window"]').value } };
      else body = { decision: "approved", scope: scope };
    }
    for (const b of card.querySelectorAll("button")) b.disabled = true;
    try {
      const view = await postJson("/console/api/consent/" + encodeURIComponent(id), body);
      show(status, "Recorded: " + view.status + ". The agent's call continues.", "ok");
      card.classList.add("settled");
    } catch (e) {
      show(status, e.message, "error");
      for (const b of card.querySelectorAll("button")) b.disabled = false;
    }
  }

  function wirePending() {
    const list = document.getElementById("pending-list");
    if (!list) return;
    list.addEventListener("click", (event) => {
      const button = event.target.closest("button[data-action]");
      const card = button && button.closest("[data-consent-id]");
      if (card) void act(card, button);
    });
    list.addEventListener("input", (event) => {
      const card = event.target.closest("[data-consent-id]");
      if (card && event.target.matches('[data-role="arguments"]')) updateDiff(card);
    });
    let refreshing = false;
    async function refresh() {
      if (refreshing) return;
      refreshing = true;
      try {
        const res = await fetch("/console/fragments/pending", { credentials: "same-origin" });
        if (!res.ok) return;
        const html = await res.text();
        // keep cards a person is working on; add new ones, drop settled ones
        const holder = document.createElement("div");
        holder.innerHTML = html;
        const fresh = new Map();
        for (const c of holder.querySelectorAll("[data-consent-id]")) fresh.set(c.getAttribute("data-consent-id"), c);
        for (const c of list.querySelectorAll("[data-consent-id]")) {
          const id = c.getAttribute("data-consent-id");
          if (fresh.has(id)) fresh.delete(id);
          else if (!c.classList.contains("settled")) c.remove();
        }
        const empty = list.querySelector(".empty");
        if (empty && fresh.size > 0) empty.remove();
        for (const c of fresh.values()) list.appendChild(c);
        if (list.children.length === 0) list.innerHTML = holder.innerHTML;
      } finally {
        refreshing = false;
      }
    }
    const live = document.querySelector('[data-role="live"]');
    const source = new EventSource("/console/events");
    source.addEventListener("consent", () => void refresh());
    source.addEventListener("open", () => live && live.classList.add("connected"));
    source.addEventListener("error", () => live && live.classList.remove("connected"));
  }

  function wireSimulator() {
    const button = document.querySelector('[data-action="simulate"]');
    if (!button) return;
    const result = document.querySelector('[data-role="sim-result"]');
    button.addEventListener("click", async () => {
      let request;
      try {
        request = JSON.parse(document.querySelector('[data-role="sim-request"]').value);
      } catch (e) {
        result.textContent = "Invalid JSON: " + e.message;
        return;
      }
      try {
        const d = await postJson("/console/api/simulate", request);
        result.replaceChildren();
        const h = document.createElement("h2");
        h.className = "route route-" + d.route;
        h.textContent = "Route: " + d.route;
        const rule = document.createElement("p");
        rule.textContent = d.rule ? "Deciding rule: " + d.rule : "No rule decided (defaults applied).";
        const meta = document.createElement("p");
        meta.textContent = "Category " + d.category + ", risk " + d.risk_level + ".";
        const ul = document.createElement("ul");
        for (const r of d.reasons) {
          const li = document.createElement("li");
          li.textContent = r.message + " (" + r.source + (r.rule ? ", rule " + r.rule : "") + ")";
          ul.appendChild(li);
        }
        result.append(h, rule, meta, ul);
      } catch (e) {
        result.textContent = e.message;
      }
    });
  }

  document.addEventListener("DOMContentLoaded", () => {
    wirePending();
    wireSimulator();
  });
})();

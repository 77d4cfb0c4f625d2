/* global document, window, EventSource -- a browser script */
// The ACP console's one script: live pending list, approve/deny actions, argument diff, simulator.
// Loaded from 'self' only (the CSP forbids inline script). Every state change carries the CSRF token.
"use strict";

(function () {
  // The session's CSRF token: handed over once by the sign-in (the fragment of its redirect, never sent to
  // a server) and kept in this origin's localStorage. No page holds it, and no other port of this host can
  // read it: a page read with the session cookie alone (browsers send it to every port) answers nothing.
  const KEY = "acp-console-key";
  const handed = /^#key=([A-Za-z0-9_%.~-]{1,512})$/.exec(window.location.hash);
  if (handed) {
    try {
      window.localStorage.setItem(KEY, decodeURIComponent(handed[1]));
    } catch {
      // storage refused (a locked-down browser): answers then say to sign in again
    }
    window.history.replaceState(null, "", window.location.pathname + window.location.search);
  }
  let csrf = "";
  try {
    csrf = window.localStorage.getItem(KEY) || "";
  } catch {
    csrf = "";
  }
  for (const input of document.querySelectorAll('form.signout input[name="csrf"]')) input.value = csrf;

  // Control, bidirectional, invisible and default-ignorable characters, the line and paragraph separators and
  // the spaces other than U+0020 shown as \uXXXX escapes (one beyond U+FFFF as its two halves): the same set as
  // the server's printable() (@acp/core). An agent's text could otherwise reorder or hide what a person reads.
  const UNPRINTABLE =
    /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Default_Ignorable_Code_Point}\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]/gu;
  function printable(text) {
    return String(text).replace(UNPRINTABLE, (c) =>
      Array.from({ length: c.length }, (_, i) => "\\u" + c.charCodeAt(i).toString(16).padStart(4, "0")).join(""),
    );
  }

  // The session ended (expired, or signed out elsewhere): say so once, at the top of the page.
  function sessionEnded() {
    if (document.querySelector('[data-role="session-ended"]')) return;
    const p = document.createElement("p");
    p.className = "session-ended";
    p.setAttribute("data-role", "session-ended");
    p.setAttribute("role", "alert");
    p.textContent =
      "Your console session has ended. Sign in again with a fresh link (acp console-link); nothing on this page can be answered until then.";
    const main = document.querySelector("main");
    if (main) main.prepend(p);
  }

  class RequestError extends Error {
    constructor(message, status, code) {
      super(message);
      this.status = status;
      this.code = code;
    }
  }

  async function postJson(url, body) {
    let res;
    try {
      res = await fetch(url, {
        method: "POST",
        credentials: "same-origin",
        headers: { "content-type": "application/json", "x-csrf-token": csrf },
        body: JSON.stringify(body),
      });
    } catch {
      // the answer may or may not have reached the service: say so, never "failed" outright
      throw new RequestError(
        "Could not reach acp serve, so this answer may not have been recorded. Check the service; this card updates when the page is live again.",
        0,
        "unreachable",
      );
    }
    const data = await res.json().catch(() => ({}));
    if (res.status === 401) sessionEnded();
    if (res.status === 403 && data.error && data.error.code === "csrf_token_invalid") {
      throw new RequestError(
        "This browser does not hold this console session's key (it is given at sign-in, to this address only). Sign in again with a fresh link (acp console-link).",
        403,
        "csrf_token_invalid",
      );
    }
    if (!res.ok) {
      const error = data.error || {};
      throw new RequestError(printable(error.message || "request failed (" + res.status + ")"), res.status, error.code);
    }
    return data;
  }

  function show(el, text, kind) {
    if (!el) return;
    el.textContent = text;
    el.className = "status " + (kind || "");
  }

  const has = (o, k) => Object.prototype.hasOwnProperty.call(o, k);

  // A top-level diff of edited arguments against the shown ones: "- key: old" / "+ key: new". An approval's
  // modifications replace or add top-level arguments ({...arguments, ...modifications}, the consent
  // protocol): a removed one would still run, so the diff says it cannot be removed.
  function diffLines(before, after) {
    const keys = Array.from(new Set(Object.keys(before).concat(Object.keys(after)))).sort();
    const lines = [];
    for (const k of keys) {
      const a = has(before, k) ? JSON.stringify(before[k]) : undefined;
      const b = has(after, k) ? JSON.stringify(after[k]) : undefined;
      if (a === b) continue;
      const key = printable(JSON.stringify(k).slice(1, -1));
      if (b === undefined)
        lines.push("- " + key + ": " + printable(a) + "   (cannot be removed: put it back, or deny)");
      else if (a === undefined) lines.push("+ " + key + ": " + printable(b) + " (new argument)");
      else lines.push("- " + key + ": " + printable(a), "+ " + key + ": " + printable(b));
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
    const removed = Object.keys(before).filter((k) => !has(after, k));
    const out = {};
    for (const k of Object.keys(after)) {
      if (!has(before, k) || JSON.stringify(before[k]) !== JSON.stringify(after[k])) out[k] = after[k];
    }
    return { before, after, changes: out, removed };
  }

  function updateDiff(card) {
    const target = card.querySelector('[data-role="diff"]');
    try {
      const { before, after } = changedArguments(card);
      const lines = diffLines(before, after);
      target.textContent = lines.length === 0 ? "(no change yet)" : lines.join("\n");
    } catch (e) {
      target.textContent = "invalid JSON: " + printable(e.message);
    }
  }

  // A card whose request is no longer waiting (answered here, in another tab, by another approver or
  // acp approve; expired; withdrawn): it stays, says what happened, and its controls are disabled, so what
  // a person typed is not lost and nobody answers a request that has ended.
  const ENDED = {
    approved: "Already approved (in another tab, by another approver or with acp approve). Nothing to do.",
    denied: "Already denied (in another tab, by another approver or with acp deny). Nothing to do.",
    expired: "Expired: nobody answered in time, so the agent's call was denied.",
    withdrawn: "Withdrawn: the agent stopped waiting (its connection closed or the service stopped).",
  };
  // a card that no longer waits shows when its request was due, not a countdown frozen at its last tick
  function freezeExpiry(card) {
    const t = card.querySelector('[data-role="expires"]');
    if (t) t.textContent = t.getAttribute("datetime");
  }
  function markEnded(card, status) {
    if (card.classList.contains("settled")) return;
    card.classList.add("settled");
    freezeExpiry(card);
    card.dispatchEvent(new CustomEvent("acp:settled", { bubbles: true }));
    for (const el of card.querySelectorAll("button, input, select, textarea")) el.disabled = true;
    show(
      card.querySelector('[data-role="status"]'),
      ENDED[status] || "No longer waiting (" + printable(status) + ").",
      "ended",
    );
  }

  async function checkEnded(card) {
    const id = card.getAttribute("data-consent-id");
    let res;
    try {
      res = await fetch("/console/api/consent/" + encodeURIComponent(id), { credentials: "same-origin" });
    } catch {
      return; // the service is not reachable: the next refresh asks again
    }
    if (res.status === 401) return sessionEnded();
    if (res.status === 404) return markEnded(card, "gone");
    if (!res.ok) return;
    const view = await res.json();
    if (view.status !== "pending") markEnded(card, view.status);
    else if (Date.parse(view.expires_at) <= Date.now()) markEnded(card, "expired");
  }

  // "expires in 1 min 50 s", kept current; the exact time stays in the title
  function describeLeft(ms) {
    if (ms <= 0) return "now";
    const s = Math.ceil(ms / 1000);
    if (s < 60) return "in " + s + " s";
    const m = Math.floor(s / 60);
    if (m < 60) return "in " + m + " min " + (s % 60) + " s";
    const h = Math.floor(m / 60);
    return "in " + h + " h " + (m % 60) + " min";
  }
  function tickExpiries() {
    for (const t of document.querySelectorAll('[data-role="expires"]')) {
      const card = t.closest("[data-consent-id]");
      if (card && card.classList.contains("settled")) continue;
      const at = t.getAttribute("datetime");
      if (!t.title) t.title = at;
      t.textContent = describeLeft(Date.parse(at) - Date.now());
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
      let edit;
      try {
        edit = changedArguments(card);
      } catch (e) {
        return show(status, "Invalid arguments: " + printable(e.message), "error");
      }
      const changes = edit.changes;
      if (edit.removed.length > 0) {
        const names = edit.removed.map((k) => printable(JSON.stringify(k))).join(", ");
        return show(
          status,
          "An argument cannot be removed (" +
            names +
            "): an approval can only change or add arguments. Put it back, or deny.",
          "error",
        );
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
      card.classList.add("settled");
      freezeExpiry(card);
      card.dispatchEvent(new CustomEvent("acp:settled", { bubbles: true }));
      for (const el of card.querySelectorAll("input, select, textarea")) el.disabled = true;
      show(
        status,
        view.status === "denied"
          ? "Recorded: denied. The agent is told no" + (body.reason ? ", with your reason." : ".")
          : body.decision === "approved_with_modifications"
            ? "Recorded: approved with your edits. The edited call is judged by the policy again before the agent may run it."
            : "Recorded: approved. The agent's call continues.",
        "ok",
      );
    } catch (e) {
      if (e.status === 409 || e.status === 410 || e.status === 404) {
        // answered elsewhere or ended meanwhile: say which, and leave the card disabled
        await checkEnded(card);
        if (!card.classList.contains("settled")) markEnded(card, e.status === 410 ? "expired" : "gone");
      } else {
        show(status, e.message, "error");
        for (const b of card.querySelectorAll("button")) b.disabled = false;
      }
    }
    // the buttons are disabled now: keep the keyboard focus on this card, on what happened
    if (status) status.focus();
  }

  // A card listed shortened (its arguments cut to their first values, long texts by their ends) loads its
  // request whole on demand, for this one card: it is replaced by the whole card ("show all", the edit box),
  // keeping what was typed into it. The page itself never holds every request whole.
  async function loadWhole(card, button) {
    const id = card.getAttribute("data-consent-id");
    const status = card.querySelector('[data-role="status"]');
    const loaders = card.querySelectorAll('button[data-action="load-whole"]');
    const again = (message) => {
      show(status, message, "error");
      for (const b of loaders) b.disabled = false;
    };
    for (const b of loaders) b.disabled = true;
    let res;
    try {
      res = await fetch("/console/fragments/consent/" + encodeURIComponent(id), {
        credentials: "same-origin",
        headers: { "x-csrf-token": csrf },
      });
    } catch {
      return again("Could not reach acp serve to load the whole request. Try again.");
    }
    if (res.status === 401) return sessionEnded();
    if (res.status === 404) return markEnded(card, "gone");
    if (!res.ok) {
      const data = await res.json().catch(() => ({}));
      const error = data.error || {};
      return again(
        error.code === "csrf_token_invalid"
          ? "This browser does not hold this console session's key (it is given at sign-in, to this address only). Sign in again with a fresh link (acp console-link)."
          : printable(error.message || "could not load the whole request (" + res.status + ")"),
      );
    }
    const holder = document.createElement("div");
    holder.innerHTML = await res.text();
    const whole = holder.querySelector("[data-consent-id]");
    if (!whole || whole.getAttribute("data-consent-id") !== id) return again("The service sent another request.");
    if (card.classList.contains("settled")) return; // answered or ended while it loaded: the card says so
    for (const role of ["reason", "window"]) {
      const from = card.querySelector('[data-role="' + role + '"]');
      const to = whole.querySelector('[data-role="' + role + '"]');
      if (from && to) to.value = from.value;
    }
    const toEdit = button.closest("details.edit") !== null;
    card.replaceWith(whole);
    tickExpiries();
    const edit = whole.querySelector("details.edit");
    if (toEdit && edit) edit.open = true;
    const shownStatus = whole.querySelector('[data-role="status"]');
    show(shownStatus, "The whole request is shown.", "ok");
    await checkEnded(whole);
    if (shownStatus) shownStatus.focus();
  }

  function wirePending() {
    const list = document.getElementById("pending-list");
    if (!list) return;
    list.addEventListener("click", (event) => {
      const button = event.target.closest("button[data-action]");
      const card = button && button.closest("[data-consent-id]");
      if (!card) return;
      if (button.getAttribute("data-action") === "load-whole") void loadWhole(card, button);
      else void act(card, button);
    });
    // Enter in a card's reason field denies with that reason, as a form would (the field is for denying)
    list.addEventListener("keydown", (event) => {
      if (event.key !== "Enter" || !event.target.matches('[data-role="reason"]')) return;
      const card = event.target.closest("[data-consent-id]");
      const deny = card && card.querySelector('button[data-action="deny"]');
      if (!deny || deny.disabled) return;
      event.preventDefault();
      void act(card, deny);
    });
    list.addEventListener("input", (event) => {
      const card = event.target.closest("[data-consent-id]");
      if (card && event.target.matches('[data-role="arguments"]')) updateDiff(card);
    });
    // One refresh at a time; a change announced while one is running (its answer may predate the change)
    // runs another after it, so no request is missed.
    let refreshing = false;
    let again = false;
    async function refresh() {
      if (refreshing) {
        again = true;
        return;
      }
      refreshing = true;
      try {
        do {
          again = false;
          if (!(await refreshOnce())) return;
        } while (again);
      } finally {
        refreshing = false;
      }
    }
    // Fetches the list; false when the session ended or the service did not answer.
    async function refreshOnce() {
      // the page this address shows (`?after=`: a later page of a flood), a bounded number of requests
      const after = new URLSearchParams(window.location.search).get("after");
      const url = "/console/fragments/pending" + (after ? "?after=" + encodeURIComponent(after) : "");
      const res = await fetch(url, { credentials: "same-origin" });
      if (res.status === 401) {
        sessionEnded();
        return false;
      }
      if (!res.ok) return false;
      const html = await res.text();
      // keep cards a person is working on; add new ones; a card whose request ended says why (checkEnded)
      const holder = document.createElement("div");
      holder.innerHTML = html;
      // how many wait in all and the way to the next page: replaced as it comes
      const more = holder.querySelector('[data-role="more"]');
      const shownMore = document.querySelector('[data-role="more"]');
      if (more) {
        more.remove();
        if (shownMore) shownMore.replaceWith(more);
      }
      const fresh = new Map();
      for (const c of holder.querySelectorAll("[data-consent-id]")) fresh.set(c.getAttribute("data-consent-id"), c);
      for (const c of list.querySelectorAll("[data-consent-id]")) {
        const id = c.getAttribute("data-consent-id");
        if (fresh.has(id)) fresh.delete(id);
        else if (!c.classList.contains("settled")) await checkEnded(c);
      }
      const empty = list.querySelector(".empty");
      if (empty && fresh.size > 0) empty.remove();
      for (const c of fresh.values()) list.appendChild(c);
      announce(Array.from(fresh.values()));
      if (list.children.length === 0) list.innerHTML = holder.innerHTML;
      tickExpiries();
      countWaiting();
      return true;
    }
    // New requests are announced in one polite live region (the list itself is not live: its countdowns
    // tick every second and a screen reader would read each tick).
    const announcer = document.querySelector('[data-role="announce"]');
    function announce(cards) {
      if (!announcer || cards.length === 0) return;
      const first = cards[0].querySelector("h2");
      const what = first ? first.textContent : "";
      announcer.textContent =
        cards.length === 1 ? "New request: " + what : cards.length + " new requests. The first: " + what;
    }
    // the tab's title counts the requests still waiting, so a tab left in the background shows them: this
    // page's, and those the last refresh counted on other pages
    const baseTitle = document.title;
    function countWaiting() {
      const more = document.querySelector('[data-role="more"]');
      const others = more ? Number(more.getAttribute("data-others")) || 0 : 0;
      const n = list.querySelectorAll("[data-consent-id]:not(.settled)").length + Math.max(0, others);
      document.title = (n > 0 ? "(" + n + ") " : "") + baseTitle;
    }
    list.addEventListener("acp:settled", countWaiting);
    countWaiting();
    const live = document.querySelector('[data-role="live"]');
    const source = new EventSource("/console/events");
    source.addEventListener("consent", (event) => {
      // a request that ended says so at once from the event itself ({kind, id, status}); the refresh
      // that follows asks only about cards whose end it missed
      try {
        const change = JSON.parse(event.data);
        if (change && change.kind === "settled" && typeof change.id === "string" && change.status !== "pending") {
          for (const c of list.querySelectorAll("[data-consent-id]")) {
            if (c.getAttribute("data-consent-id") === change.id) markEnded(c, String(change.status));
          }
        }
      } catch {
        // not JSON: the refresh finds out
      }
      void refresh();
    });
    const liveText = live ? live.textContent : "";
    source.addEventListener("open", () => {
      if (live) {
        live.classList.add("connected");
        live.textContent = liveText;
      }
      // changes made while the stream was down are picked up now
      void refresh();
    });
    source.addEventListener("error", () => {
      if (live) {
        live.classList.remove("connected");
        live.textContent = "Not live: reconnecting to the service… (new requests show once it is back)";
      }
      // a stream refused (401: the session ended) is not retried by the browser: find out and say so
      if (source.readyState === EventSource.CLOSED) void refresh();
    });
    tickExpiries();
    setInterval(tickExpiries, 1000);
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
        h.textContent = "Route: " + printable(d.route);
        const invalid = d.reasons.some((r) => r.code === "invalid_request");
        const rule = document.createElement("p");
        rule.textContent = invalid
          ? "This is not a valid action request, so an agent sending it would be refused. Fix it and simulate again."
          : d.rule
            ? "Deciding rule: " + printable(d.rule)
            : "No rule decided (defaults applied).";
        const meta = document.createElement("p");
        meta.textContent = "Category " + printable(d.category) + ", risk " + printable(d.risk_level) + ".";
        const ul = document.createElement("ul");
        for (const r of d.reasons) {
          const li = document.createElement("li");
          li.textContent = printable(r.message + " (" + r.source + (r.rule ? ", rule " + r.rule : "") + ")");
          ul.appendChild(li);
        }
        if (invalid) result.append(h, rule, ul);
        else result.append(h, rule, meta, ul);
        // an agent held to servers is judged under the server it names (ADR 0006): said when that differs
        const held = d.held_to_server;
        if (!invalid && held && (held.route !== d.route || held.rule !== d.rule)) {
          const p = document.createElement("p");
          p.setAttribute("data-role", "sim-held");
          p.textContent =
            "An agent held to servers (serve.agent_servers) that may name this server: route " +
            printable(held.route) +
            (held.rule ? ", rule " + printable(held.rule) : ", no rule (defaults applied)") +
            ".";
          result.append(p);
        }
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

/**
 * What a session counts of the calls it lets run: each executed call enters the history, the intent's budgets,
 * the transition rules and the kill switch, and leaves a note for its result. A call `authorize` let through is
 * counted then; its later record brings its result only.
 */
import { canonicalSha256Ref } from "../canonical-json/index.js";
import type { ActionRequest } from "../request/index.js";
import { primaryActionName } from "./action-name.js";
import { judgeRequest, type ExecutedCall, type SessionJudgment } from "./evaluate-session.js";
import { deriveProvenance, namesFetchedSource } from "./provenance.js";
import { createProvenanceBudget, EVERY_PIECE } from "./provenance-budget.js";
import { MAX_KEPT_HISTORY, type PendingFetch, type SessionCore } from "./session-core.js";
import { readRequest } from "./session-gate.js";
import { suspend } from "./session-lifecycle.js";
import { directoryFor, recordToolResult } from "./session-records.js";

/**
 * For a call to a trusted server or a directory: the pieces of its arguments that no trusted source holds. Its
 * answer may repeat them (`no contact found for mark@attacker.example`, the `recipient` of an inbox it was asked
 * for), and such a source vouches for what it says, not for what it was asked: its answer does not vouch for these.
 */
function echoedPieces(core: SessionCore, request: ActionRequest): ReadonlySet<string> {
  const server = request.server ?? "agent";
  const names = [server, `${server}.${request.tool}`];
  const trusted = core.settings.trustedServers.match(names) !== undefined;
  if (!trusted && directoryFor(core, names).directory === undefined) return new Set();
  const budget = createProvenanceBudget();
  const pieces = deriveProvenance(core.entries, request.arguments, { budget });
  // arguments too many to trace: the answer vouches for none of them
  if (budget.exceeded) return EVERY_PIECE;
  return new Set(pieces.filter((p) => p.status !== "trusted").map((p) => p.piece));
}

function killSwitch(core: SessionCore, nowMs: number): void {
  const ks = core.settings.settings.kill_switch;
  if (ks === null) return;
  const since = nowMs - ks.window_seconds * 1000;
  // only the calls since the last resume are kept (see resume); a call that left the window stays out
  const counts = core.counts;
  counts.consequentialAt = counts.consequentialAt.filter((at) => at > since);
  counts.callsAt = counts.callsAt.filter((at) => at > since);
  const recent = counts.consequentialAt.length;
  const all = counts.callsAt.length;
  if (ks.consequential_calls !== undefined && recent >= ks.consequential_calls) {
    suspend(core, `${recent} consequential calls within ${ks.window_seconds} s (kill switch)`);
  } else if (ks.calls !== undefined && all >= ks.calls) {
    suspend(core, `${all} calls within ${ks.window_seconds} s (kill switch)`);
  }
}

/** Counts a recorded call into what the judgment reads: its intent version's budgets, transition rules, kill switch. */
function countExecuted(core: SessionCore, call: ExecutedCall): void {
  const counts = core.counts;
  const intent = core.intent;
  let budget = counts.budgets.get(call.intent_version);
  if (budget === undefined) {
    budget = { total: 0, consequential: 0, perAction: (intent?.perAction ?? []).map(() => 0) };
    counts.budgets.set(call.intent_version, budget);
  }
  budget.total++;
  if (call.consequential) budget.consequential++;
  intent?.perAction.forEach(({ pattern }, i) => {
    if (pattern.match(call.names) !== undefined) budget.perAction[i] = (budget.perAction[i] ?? 0) + 1;
  });
  core.settings.transitions.forEach((rule, i) => {
    if (counts.transitionAfter[i] === undefined && rule.from(call.names, call.category))
      counts.transitionAfter[i] = call.names[0] ?? "";
  });
  const ks = core.settings.settings.kill_switch;
  if (call.consequential && ks?.consequential_calls !== undefined) counts.consequentialAt.push(call.at);
  if (ks?.calls !== undefined) counts.callsAt.push(call.at);
}

/** Most calls `authorize` let through that wait for their `recordExecution` (past it, a record counts again). */
export const MAX_AUTHORIZED_UNRECORDED = 1_000;

/** The key a call let through by `authorize` is found again by: its action and its arguments' hash, as the token's. */
function authorizedKey(request: ActionRequest): string {
  return `${primaryActionName(request)}\u0000${canonicalSha256Ref(request.arguments)}`;
}

/**
 * Counts a call the session lets run into its history, budgets, transition rules and kill switch, and notes
 * what its result will need (whether the user named what it fetched, what a trusted answer may echo).
 */
function countCall(core: SessionCore, request: ActionRequest, judgment: SessionJudgment, how: string): PendingFetch {
  const at = core.now().getTime();
  const call: ExecutedCall = Object.freeze({
    seq: core.executed + 1,
    at,
    intent_version: core.intent?.intent.version ?? 0,
    names: judgment.names,
    category: judgment.category,
    // as the judgment counted it: a call judged consequential (also by the category it claims) spends the budget
    consequential: judgment.consequential,
  });
  countExecuted(core, call);
  core.executed++;
  core.history.push(call);
  // a long-lived session keeps the recent calls, not all of them (dropped in chunks: amortized O(1))
  if (core.history.length >= 2 * MAX_KEPT_HISTORY) core.history.splice(0, core.history.length - MAX_KEPT_HISTORY);
  core.emit(
    "execution_recorded",
    `\`${judgment.names[0] ?? request.tool}\` ${how} (${judgment.category}, route ${judgment.route})`,
  );
  // the user's entries only (what namesFetchedSource reads of them), without filtering every entry again
  return {
    call,
    named: namesFetchedSource(core.userEntries(), request.arguments),
    echoes: echoedPieces(core, request),
  };
}

/** Queues a call's note for a result recorded apart (`recordToolResult`), oldest first per tool. */
function queueNote(core: SessionCore, request: ActionRequest, note: PendingFetch): void {
  const key = `${request.server ?? "agent"}.${request.tool}`;
  const queue = core.pendingFetches.get(key) ?? [];
  if (queue.length < 1000) queue.push(note);
  core.pendingFetches.set(key, queue);
}

/**
 * A call `authorize` let through is counted as it is let through, not when its result comes: otherwise calls
 * authorized together (an agent's parallel calls) were each judged against counts that held none of the others,
 * and all ran past `max_calls`, `max_consequential_calls`, a per-action cap and the kill switch. Its result, when
 * `recordExecution` brings it, is recorded with this call's note and counts nothing again.
 */
export function recordAuthorized(core: SessionCore, request: ActionRequest, judgment: SessionJudgment): void {
  const note = countCall(core, request, judgment, "let through by its authority token");
  queueNote(core, request, note);
  if (core.authorizedUnrecorded < MAX_AUTHORIZED_UNRECORDED) core.waitAuthorized(authorizedKey(request), note);
  if (judgment.consequential || core.settings.settings.kill_switch?.calls !== undefined) killSwitch(core, note.call.at);
}

/**
 * Records a call as executed (after the gate let it through) and, when given, its result; returns the call
 * (its `seq` is what `recordToolResult`'s `call` option names for a result recorded apart). A call the session
 * refuses cannot be recorded as executed: that is an enforcement bypass, recorded and thrown. The kill switch
 * is checked after each consequential call. A call `authorize` let through was counted then: this records its
 * result only.
 */
export function recordExecution(core: SessionCore, value: unknown, result: unknown, hasResult: boolean): ExecutedCall {
  const request: ActionRequest = readRequest(core, value);
  // without calls waiting (a front end that uses no tokens) nothing is hashed
  const authorized = core.authorizedUnrecorded === 0 ? undefined : core.takeAuthorized(authorizedKey(request));
  if (authorized !== undefined) {
    // recorded together: this call's own note, taken out of the queue a result recorded apart would read
    if (hasResult) {
      core.takeNote(`${request.server ?? "agent"}.${request.tool}`, authorized.call.seq);
      recordToolResult(core, request.server ?? "agent", request.tool, result, {}, authorized);
    }
    return authorized.call;
  }
  // the decision's judgment of this very request, when nothing in the session changed since (same result)
  const judgment = core.recall(request) ?? judgeRequest(core.view(), request);
  if (judgment.route === "refuse") {
    core.fail(
      "execution_not_permitted",
      `\`${judgment.names[0] ?? request.tool}\` was executed although the session refuses it: ${judgment.reasons[0]?.message ?? ""}`,
      [],
      "execution_refused",
    );
  }
  const note = countCall(core, request, judgment, "executed");
  if (hasResult) {
    // recorded together: this call's note, never one an earlier call without a result left behind
    recordToolResult(core, request.server ?? "agent", request.tool, result, {}, note);
  } else {
    queueNote(core, request, note);
  }
  if (judgment.consequential || core.settings.settings.kill_switch?.calls !== undefined) killSwitch(core, note.call.at);
  return note.call;
}

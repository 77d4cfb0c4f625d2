/**
 * The session's judgment of one request: a pure function of the session's state, intent, approved plan,
 * history, provenance and settings, and the clock. The session source and the token gate both use it.
 */
import { classifyAction, classifyDerived } from "../classify/index.js";
import type { Reason } from "../pipeline/index.js";
import type { ActionRequest, Category } from "../request/index.js";
import { routeStrictness, type Route } from "../route/index.js";
import { actionNamesOf, primaryActionName, type ActionPatterns } from "./action-name.js";
import type { SessionCode } from "./codes.js";
import type { CompiledIntent } from "./intent.js";
import { fitPlan, type CompiledPlan } from "./plan.js";
import { WorkBudgetExceededError, withWorkBudget } from "../glob/index.js";
import { deriveProvenance, type PieceProvenance, type ProvenanceEntry } from "./provenance.js";
import { createProvenanceBudget, type ProvenanceBudget } from "./provenance-budget.js";
import { builtLinks, mayHoldLink } from "./built-links.js";
import { describeActionVerb, quotePiece, sourceName, taintQuestion } from "./semantic-question.js";
import type { SessionSettings } from "./session-settings.js";
import type { SessionState } from "./state-machine.js";
import type { SessionCounts } from "./session-core.js";
import { firedTransitions, type CompiledTransitionRule } from "./transitions.js";

/** Categories whose calls change something outside the agent: provenance, budgets and the kill switch watch them. */
export const CONSEQUENTIAL_CATEGORIES: readonly Category[] = [
  "write",
  "communication",
  "financial",
  "system",
  "public",
  "physical",
];

/** One call the session executed. */
export interface ExecutedCall {
  readonly seq: number;
  /** Milliseconds since the epoch. */
  readonly at: number;
  readonly intent_version: number;
  readonly names: readonly string[];
  readonly category: Category;
  readonly consequential: boolean;
}

/** Settings with their globs and rules compiled. */
export interface CompiledSessionSettings {
  readonly settings: SessionSettings;
  readonly transitions: readonly CompiledTransitionRule[];
  readonly trustedServers: ActionPatterns;
}

/** Everything the judgment reads. */
export interface SessionView {
  readonly state: SessionState;
  readonly intent: CompiledIntent | null;
  /** The approved plan in force (null when none is approved). */
  readonly plan: CompiledPlan | null;
  readonly settings: CompiledSessionSettings;
  /** Calls executed so far: changes whenever `counts` does (the remembered judgments compare it). */
  readonly executed: number;
  readonly counts: SessionCounts;
  readonly entries: readonly ProvenanceEntry[];
  readonly provenanceIncomplete: boolean;
  /** Untrusted sources whose content reads like instructions. */
  readonly instructionSources: readonly string[];
  /** Earlier sessions' memory (`ProvenanceMemory.recall`), for the arguments of consequential calls. */
  readonly recall: ((identity: string) => string | undefined) | undefined;
}

/** The judgment: a route, every reason, and what the session learned about the call. */
export interface SessionJudgment {
  readonly route: Route;
  readonly reasons: readonly Reason[];
  readonly names: readonly string[];
  readonly category: Category;
  readonly consequential: boolean;
  /** The plan step the call fits, or null. */
  readonly step: number | null;
  /** The pieces found only in untrusted content. */
  readonly tainted: readonly PieceProvenance[];
}

interface Finding {
  readonly route: Route;
  readonly reason: Reason;
}

function finding(route: Route, code: SessionCode, message: string, rule?: string): Finding {
  const reason: Reason =
    rule === undefined ? { source: "session", code, message } : { source: "session", code, message, rule };
  return { route, reason };
}

const STATE_REFUSALS: Partial<Record<SessionState, [SessionCode, string]>> = {
  suspended: ["session_suspended", "the session is suspended until a person resumes it"],
  terminated: ["session_terminated", "the session was terminated"],
  completed: ["session_completed", "the session has completed"],
};

function stateFinding(state: SessionState): Finding | undefined {
  if (state === "executing") return undefined;
  const [code, message] = STATE_REFUSALS[state] ?? [
    "session_not_executing",
    `the session is not executing (state \`${state}\`)`,
  ];
  return finding("refuse", code, message);
}

function intentFindings(intent: CompiledIntent, names: readonly string[], action: string): Finding[] {
  const forbidden = intent.forbidden.match(names);
  if (forbidden !== undefined)
    return [finding("refuse", "intent_forbidden", `the intent forbids \`${action}\` (\`${forbidden}\`)`, forbidden)];
  if (intent.allowed.match(names) === undefined) {
    return [
      finding(
        "refuse",
        "intent_not_allowed",
        `\`${action}\` is outside the intent \`${intent.intent.goal.slice(0, 80)}\``,
      ),
    ];
  }
  const confirm = intent.confirm.match(names);
  return confirm === undefined
    ? []
    : [finding("ask", "intent_confirm", `the intent asks a person before \`${action}\``, confirm)];
}

/**
 * Work units one decision may spend fitting a call to the approved plan (2^23, as one policy evaluation):
 * steps × the characters of the arguments they constrain, and each step's glob matcher's own steps. A plan of
 * many steps with costly globs against a long argument held the proxy for minutes per call.
 */
export const PLAN_WORK_BUDGET = 2 ** 23;

function planFindings(
  view: SessionView,
  names: readonly string[],
  request: ActionRequest,
  action: string,
): { step: number | null; found: Finding[] } {
  if (view.plan === null) return { step: null, found: [] };
  const route: Route = view.settings.settings.off_plan === "ask" ? "ask" : "refuse";
  const plan = view.plan;
  let fit: ReturnType<typeof fitPlan>;
  try {
    // the steps' constraints read the call's arguments once per step: bounded, as the policy's matching is
    fit = withWorkBudget(PLAN_WORK_BUDGET, () => fitPlan(plan, names, request.arguments));
  } catch (err) {
    if (!(err instanceof WorkBudgetExceededError)) throw err;
    const message = `the call's arguments are too costly to check against the approved plan's constraints (${err.message}), so \`${action}\` is not taken for a step of it`;
    return { step: null, found: [finding(route, "plan_constraint_failed", message)] };
  }
  if (fit.ok) return { step: fit.step, found: [] };
  if (fit.reason === "not_in_plan")
    return { step: null, found: [finding(route, "not_in_plan", `no step of the approved plan is \`${action}\``)] };
  const message = `step ${fit.step + 1} of the plan is \`${action}\`, but argument \`${fit.argument}\` breaks its constraint`;
  return { step: null, found: [finding(route, "plan_constraint_failed", message)] };
}

function budgetFindings(
  view: SessionView,
  intent: CompiledIntent,
  names: readonly string[],
  consequential: boolean,
): Finding[] {
  const budgets = intent.intent.budgets;
  if (budgets.max_calls === undefined && budgets.max_consequential_calls === undefined && intent.perAction.length === 0)
    return [];
  // counted as calls were recorded, per intent version (a new version starts from nothing)
  const counted = view.counts.budgets.get(intent.intent.version);
  const found: Finding[] = [];
  if (budgets.max_calls !== undefined && (counted?.total ?? 0) >= budgets.max_calls) {
    found.push(finding("refuse", "budget_exhausted", `the intent's budget of ${budgets.max_calls} calls is spent`));
  }
  const spent = counted?.consequential ?? 0;
  if (consequential && budgets.max_consequential_calls !== undefined && spent >= budgets.max_consequential_calls) {
    found.push(
      finding(
        "refuse",
        "consequential_budget_exhausted",
        `the intent's budget of ${budgets.max_consequential_calls} consequential calls is spent`,
      ),
    );
  }
  intent.perAction.forEach(({ pattern, cap }, i) => {
    if (pattern.match(names) === undefined) return;
    if ((counted?.perAction[i] ?? 0) >= cap)
      found.push(
        finding(
          "refuse",
          "action_budget_exhausted",
          `the intent allows at most ${cap} calls of \`${pattern.patterns[0] ?? ""}\``,
        ),
      );
  });
  return found;
}

function transitionFindings(
  view: SessionView,
  names: readonly string[],
  category: Category,
  action: string,
): Finding[] {
  return firedTransitions(view.settings.transitions, view.counts.transitionAfter, names, category).map((fired) => {
    const words = `\`${action}\` after \`${fired.after}\` (\`${fired.rule.from} -> ${fired.rule.to}\`)`;
    return fired.rule.action === "deny"
      ? finding("refuse", "transition_denied", `a transition rule denies ${words}`, fired.rule.id)
      : finding("ask", "transition_ask", `a transition rule asks a person before ${words}`, fired.rule.id);
  });
}

/** `provenance_tainted` for each piece found only in untrusted content. */
function taintFindings(tainted: readonly PieceProvenance[], action: string, category: Category): Finding[] {
  // one question per value an argument holds: a whole argument that is an IBAN is also its `iban` piece
  // (`DE89…` and `de89…`), which a person would otherwise be shown twice
  const seen = new Set<string>();
  const once = tainted.filter((p) => {
    const key = `${JSON.stringify(p.path)}\u0000${p.piece.toLowerCase()}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  return once.map((p) => finding("ask", "provenance_tainted", taintQuestion(p, action, category)));
}

/** `instructions_seen` once instruction-like untrusted text was read (`also` ends the sentence), or nothing. */
function instructionsSeenFinding(view: SessionView, also = ""): Finding[] {
  if (view.instructionSources.length === 0) return [];
  const first = sourceName(view.instructionSources[0] ?? "");
  return [
    finding(
      "ask",
      "instructions_seen",
      `instruction-like text was read from \`${first}\` earlier in this session${also}`,
    ),
  ];
}

function provenanceFindings(
  view: SessionView,
  request: ActionRequest,
  action: string,
  category: Category,
): { tainted: PieceProvenance[]; found: Finding[] } {
  const configured = view.settings.settings.provenance;
  // A destructive or access-changing call (`system`) tracks every argument: what it deletes or whom it grants
  // is as much a destination as a recipient, so no argument is payload or an untracked reference there.
  const options =
    category === "system"
      ? { ...configured, untracked_arguments: [], payload_arguments: [], label_arguments: [], named_sources: false }
      : configured;
  const budget = createProvenanceBudget();
  // what earlier sessions read counts for what a consequential call sends or changes (not for reads: a host
  // named in yesterday's mail would ask for every link the agent builds on it today)
  const pieces = deriveProvenance(view.entries, request.arguments, {
    ...options,
    budget,
    ...(view.recall === undefined ? {} : { recall: view.recall }),
  });
  // a link written without a scheme has no host piece of its own: its host is judged here
  const built = builtLinks(pieces, hostOf(view, budget), "tainted");
  const schemeless = built.filter((b) => !/^[a-z][a-z0-9+.-]*:\/\//i.test(b.piece));
  const tainted = [...pieces.filter((p) => p.status === "tainted"), ...schemeless];
  const found = taintFindings(tainted, action, category);
  if (configured.unknown === "ask") {
    // Every unknown piece except the whole text of a label argument (a title the agent may word itself).
    const labels = new Set(options.label_arguments);
    const asked = pieces.filter(
      (p) => p.status === "unknown" && !(p.kind === "value" && labels.has(String(p.path[0]))),
    );
    for (const p of asked) {
      const words = `the agent wants to ${describeActionVerb(action, category)} ${quotePiece(p)}, which no one in this session supplied`;
      found.push(finding("ask", "provenance_unknown", words));
    }
  }
  const instructed = [...new Set(tainted.flatMap((p) => p.instruction_sources).map(sourceName))];
  if (instructed.length > 0) {
    found.push(
      finding(
        "ask",
        "instruction_source",
        `the value comes from \`${instructed[0] ?? ""}\`, whose text reads like instructions to the agent`,
      ),
    );
  }
  if (view.settings.settings.escalate_after_instructions) found.push(...instructionsSeenFinding(view));
  if (budget.exceeded) found.push(untracedFinding(pieces.length));
  if (view.provenanceIncomplete)
    found.push(
      finding(
        "ask",
        "provenance_incomplete",
        "some content the agent read could not be tracked whole (too large, or unreadable), so this consequential call is asked",
      ),
    );
  return { tainted, found };
}

/** How a host no piece of the arguments holds is judged: as a value of its own, against the session's entries. */
function hostOf(view: SessionView, budget: ProvenanceBudget): (host: string) => PieceProvenance | undefined {
  // each host judged once per decision, however many links are built on it
  const judged = new Map<string, PieceProvenance | undefined>();
  return (host) => {
    if (!judged.has(host)) judged.set(host, deriveProvenance(view.entries, { host }, { budget })[0]);
    return judged.get(host);
  };
}

/** The ask for a call whose values could not all be traced within one decision's work. */
function untracedFinding(traced: number): Finding {
  return finding(
    "ask",
    "provenance_incomplete",
    `this call carries more values than can be traced against what the session read in one decision (${traced} traced), so it is asked`,
  );
}

/**
 * What the session watches on a read: a link the agent built on a host only untrusted text named (always: the
 * link carries data there) or, with `provenance.unknown: ask`, on a host nobody named, and, by the `reads` settings (both off by default), a tracked argument found only
 * in untrusted content (a URL, a sender or a search the agent took from what it read) and any read once
 * instruction-like untrusted text was seen. Other unknown values (a query the agent worded itself) never ask here.
 */
function readFindings(
  view: SessionView,
  request: ActionRequest,
  action: string,
  category: Category,
): { tainted: PieceProvenance[]; found: Finding[] } {
  const reads = view.settings.settings.reads;
  const traced = reads.tainted_arguments === "ask" || mayHoldLink(request.arguments);
  const seen = (): Finding[] =>
    reads.after_instructions === "ask"
      ? instructionsSeenFinding(view, `; the agent now wants to read with \`${action}\``)
      : [];
  // nothing traced: no piece, no built link, no work spent; only what was read before can ask
  if (!traced) return { tainted: [], found: seen() };
  const budget = createProvenanceBudget();
  const options = { ...view.settings.settings.provenance, budget };
  const pieces = deriveProvenance(view.entries, request.arguments, options);
  // a link the agent built on a host only untrusted text named sends what it carries there: always asked
  const tainted = [
    ...(reads.tainted_arguments === "ask" ? pieces.filter((p) => p.status === "tainted") : []),
    ...builtLinks(pieces, hostOf(view, budget), "tainted"),
  ];
  const found = taintFindings(tainted, action, category);
  if (view.settings.settings.provenance.unknown === "ask") {
    for (const link of builtLinks(pieces, hostOf(view, budget), "unknown")) {
      const words = `the agent wants to read ${quotePiece(link)}, a link it built on a host no one in this session named`;
      found.push(finding("ask", "provenance_unknown", words));
    }
  }
  // after every lookup that spends from it: a host left unjudged by the second pass asks too
  if (budget.exceeded) found.push(untracedFinding(pieces.length));
  found.push(...seen());
  return { tainted, found };
}

function dedupe(found: readonly Finding[]): Finding[] {
  const seen = new Set<string>();
  return found.filter((f) => {
    const key = `${f.reason.code}\u0000${f.reason.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function compose(found: readonly Finding[], base: Omit<SessionJudgment, "route" | "reasons">): SessionJudgment {
  if (found.length === 0) {
    const reason: Reason = {
      source: "session",
      code: "session_ok",
      message: "within the intent and the approved plan",
    };
    return { ...base, route: "accept", reasons: [reason] };
  }
  const ordered = dedupe(found).sort((a, b) => routeStrictness(b.route) - routeStrictness(a.route));
  return { ...base, route: (ordered[0] as Finding).route, reasons: ordered.map((f) => f.reason) };
}

/**
 * Judges a request: the state machine (only `executing` runs), the intent (forbidden, allowed, confirm), the
 * approved plan (membership and constraints; `off_plan`), budgets, transition rules, and — for consequential
 * calls — provenance taint and instruction-bearing sources. The strictest finding wins; every reason is kept.
 */
export function judgeRequest(view: SessionView, request: ActionRequest): SessionJudgment {
  const names = actionNamesOf(request);
  const action = primaryActionName(request);
  // The caller's own category may make the judgment stricter, never looser (as in the policy): the
  // category the request's tool, annotations and `classify:` give is judged, and a claimed one too when
  // it differs (an unknown claimed word still throws, and the call refuses).
  const claimed = classifyAction(request, view.settings.settings.classify).category;
  const category = classifyDerived(request, view.settings.settings.classify).category;
  const consequential = CONSEQUENTIAL_CATEGORIES.includes(category) || CONSEQUENTIAL_CATEGORIES.includes(claimed);
  const base = { names, category, consequential, step: null, tainted: [] as PieceProvenance[] };
  const gate = stateFinding(view.state);
  if (gate !== undefined || view.intent === null) {
    return compose([gate ?? finding("refuse", "session_not_executing", "the session has no intent")], base);
  }
  const found = intentFindings(view.intent, names, action);
  const plan = planFindings(view, names, request, action);
  found.push(...plan.found, ...budgetFindings(view, view.intent, names, consequential));
  found.push(...transitionFindings(view, names, category, action));
  if (claimed !== category) found.push(...transitionFindings(view, names, claimed, action));
  let tainted: PieceProvenance[] = [];
  if (consequential && !found.some((f) => f.route === "refuse")) {
    const provenance = provenanceFindings(view, request, action, category);
    tainted = provenance.tainted;
    found.push(...provenance.found);
  } else if (category === "read" && !found.some((f) => f.route === "refuse")) {
    const read = readFindings(view, request, action, category);
    tainted = read.tainted;
    found.push(...read.found);
  }
  return compose(found, { ...base, step: plan.step, tainted });
}

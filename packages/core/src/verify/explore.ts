/**
 * Breadth-first exploration of bounded sessions: every sequence of up to `depth` calls over the model's actions
 * and values, each judged by replaying the whole trace through the real pipeline and session. States that
 * summarise alike are explored once; the first counterexample of each invariant is the shortest.
 */
import { brokenInvariants } from "./invariants.js";
import {
  INVARIANT_IDS,
  type Counterexample,
  type InvariantId,
  type ModelAction,
  type ModelValue,
  type VerifyBounds,
  type VerifyExecutor,
  type VerifyModel,
  type VerifyReport,
  type VerifyTraceEvent,
} from "./types.js";

interface Node {
  readonly events: readonly VerifyTraceEvent[];
  /** Whether each `tool_call` of `events` executed. */
  readonly executed: readonly boolean[];
  /** `action\0class` of every executed call, sorted. */
  readonly done: readonly string[];
  /** `action\0class` of every call that did not execute, sorted (only when the policy rate-limits). */
  readonly tried: readonly string[];
  readonly untrustedRead: string | null;
  readonly depth: number;
}

function argsOf(model: VerifyModel, value: ModelValue): Record<string, string> {
  if (value.value === null) return {};
  return Object.fromEntries(model.argumentKeys.map((k) => [k, value.value as string]));
}

function insertSorted(list: readonly string[], item: string): string[] {
  return [...list, item].sort();
}

function stateKey(node: Node): string {
  return JSON.stringify([node.done, node.tried]);
}

/** The initial state: the user has spoken, nothing ran. */
export function initialEvents(model: VerifyModel): VerifyTraceEvent[] {
  return [{ type: "user_input", text: model.userText }];
}

/**
 * The results a call may return: a read of an untrusted server returns each untrusted content variant; any
 * other call returns a plain acknowledgement.
 */
function contentsOf(model: VerifyModel, action: ModelAction, executes: boolean): readonly string[] {
  if (!action.untrustedRead) return [model.trustedContent];
  return executes ? model.untrustedContents : model.untrustedContents.slice(0, 1);
}

function child(
  model: VerifyModel,
  node: Node,
  step: { action: ModelAction; value: ModelValue; executes: boolean; content: number },
): Node {
  const { action, value, executes } = step;
  const call: VerifyTraceEvent = {
    type: "tool_call",
    server: action.server,
    tool: action.tool,
    args: argsOf(model, value),
  };
  const content = contentsOf(model, action, executes)[step.content] ?? model.trustedContent;
  const result: VerifyTraceEvent = { type: "tool_result", server: action.server, tool: action.tool, content };
  // Arguments of an executed call change nothing later (history keeps names and categories; provenance keeps
  // results), unless a rate-limited rule may match on them: then they are part of the state.
  const key = model.rateLimited
    ? `${action.name}\u0000${step.content}\u0000${value.cls}`
    : `${action.name}\u0000${step.content}`;
  return {
    events: [...node.events, call, result],
    executed: [...node.executed, executes],
    done: executes ? insertSorted(node.done, key) : node.done,
    tried: executes ? node.tried : insertSorted(node.tried, key),
    untrustedRead: node.untrustedRead ?? (executes && action.untrustedRead ? action.name : null),
    depth: node.depth + 1,
  };
}

/** Mutable bookkeeping of one exploration. */
interface Search {
  readonly model: VerifyModel;
  readonly executor: VerifyExecutor;
  readonly found: Map<InvariantId, Counterexample>;
  readonly approveAsks: boolean;
  calls: number;
}

/** Whether the judged call executed: accepted, or asked and approved where the person approves asks. */
async function judge(search: Search, node: Node, action: ModelAction, value: ModelValue): Promise<boolean> {
  const { model, executor } = search;
  const call: VerifyTraceEvent = {
    type: "tool_call",
    server: action.server,
    tool: action.tool,
    args: argsOf(model, value),
  };
  const trial = [...node.events, call];
  const decisions = await executor.run(trial);
  search.calls += 1;
  const decision = decisions[decisions.length - 1];
  if (decision === undefined || decisions.length !== node.executed.length + 1) {
    throw new Error(`the executor judged ${decisions.length} calls of a trace with ${node.executed.length + 1}`);
  }
  const accepted = decision.route === "accept";
  const probe =
    accepted && executor.probeToken !== undefined && !search.found.has("token_reused")
      ? executor.probeToken(trial, [...node.executed, true])
      : undefined;
  const judged = { action, value, decision, untrustedRead: node.untrustedRead };
  for (const broken of brokenInvariants(probe === undefined ? judged : { ...judged, token: probe })) {
    if (search.found.has(broken.id)) continue;
    const { route, reasons } = decision;
    search.found.set(broken.id, { invariant: broken.id, message: broken.message, events: trial, route, reasons });
  }
  return accepted || (search.approveAsks && decision.route !== "refuse");
}

/**
 * Explores every session of up to `bounds.depth` calls. Stops early when every invariant is broken, and
 * unfinished (`too_large`) when more than `bounds.maxStates` distinct states are reached — then it never says
 * `verified`, though counterexamples found so far are kept and make the outcome `violated`.
 */
export async function exploreModel(
  model: VerifyModel,
  executor: VerifyExecutor,
  bounds: VerifyBounds,
): Promise<VerifyReport> {
  const search: Search = { model, executor, found: new Map(), approveAsks: bounds.approveAsks === true, calls: 0 };
  const root: Node = { events: initialEvents(model), executed: [], done: [], tried: [], untrustedRead: null, depth: 0 };
  const seen = new Set<string>([stateKey(root)]);
  let frontier: Node[] = [root];
  let tooLarge = false;
  while (frontier.length > 0 && !tooLarge && search.found.size < INVARIANT_IDS.length) {
    const next: Node[] = [];
    for (const node of frontier) {
      if (node.depth >= bounds.depth || tooLarge) continue;
      for (const action of model.actions) {
        if (tooLarge) break;
        for (const value of model.values) {
          if (value.cls === "external_untrusted" && node.untrustedRead === null) continue;
          const executes = await judge(search, node, action, value);
          if (!executes && !model.rateLimited) continue;
          contentsOf(model, action, executes).forEach((_, content) => {
            const grown = child(model, node, { action, value, executes, content });
            const key = stateKey(grown);
            if (seen.has(key)) return;
            seen.add(key);
            if (seen.size > bounds.maxStates) tooLarge = true;
            next.push(grown);
          });
        }
      }
    }
    frontier = next;
  }
  const violations = INVARIANT_IDS.flatMap((id) => {
    const found = search.found.get(id);
    return found === undefined ? [] : [found];
  });
  const outcome = violations.length > 0 ? "violated" : tooLarge ? "too_large" : "verified";
  const complete = frontier.length === 0 && !tooLarge;
  return {
    outcome,
    depth: bounds.depth,
    complete,
    limitReached: tooLarge,
    states: seen.size,
    calls: search.calls,
    violations,
  };
}

/**
 * The four invariants, each a check of one judged call against what the model knows about it.
 */
import type { Route } from "../route/index.js";
import type { InvariantId, ModelAction, ModelValue, StepDecision, TokenProbeResult } from "./types.js";

/** What each invariant promises, in words (for `--help`, `--json` and the docs). */
export const INVARIANT_DESCRIPTIONS: Readonly<Record<InvariantId, string>> = Object.freeze({
  outside_intent_executed: "no action outside the intent executes (it is refused, not even asked)",
  untrusted_to_consequential:
    "no value taken from untrusted content reaches a consequential call without a person (never accept)",
  token_reused: "no authority token is used twice",
  untrusted_read_then_send: "no path from a read of untrusted content to a send without a person (never accept)",
});

/** One judged call in its context. */
export interface JudgedCall {
  readonly action: ModelAction;
  readonly value: ModelValue;
  readonly decision: StepDecision;
  /** The first executed action whose result was untrusted content, or null. */
  readonly untrustedRead: string | null;
  /** The token gate's answer for an accepted call, when probed. */
  readonly token?: TokenProbeResult;
}

function categoriesText(action: ModelAction): string {
  return action.categories.join("/");
}

function routed(route: Route): string {
  return route === "accept" ? "accepted" : `routed ${route}`;
}

/** The message of each invariant the call breaks (none when it keeps them all). */
export function brokenInvariants(call: JudgedCall): { id: InvariantId; message: string }[] {
  const { action, value, decision } = call;
  const broken: { id: InvariantId; message: string }[] = [];
  if (!action.inIntent && decision.route !== "refuse") {
    broken.push({
      id: "outside_intent_executed",
      message: `\`${action.name}\` is outside the intent but was ${routed(decision.route)}, not refused`,
    });
  }
  if (value.cls === "external_untrusted" && action.consequential && decision.route === "accept") {
    broken.push({
      id: "untrusted_to_consequential",
      message: `\`${action.name}\` (${categoriesText(action)}) was accepted with \`${value.value ?? ""}\`, a value only untrusted content held, without a person`,
    });
  }
  if (call.token !== undefined && call.token.secondUse) {
    broken.push({
      id: "token_reused",
      message: `an authority token for \`${action.name}\` was accepted twice: ${call.token.detail}`,
    });
  }
  if (call.untrustedRead !== null && action.send && decision.route === "accept") {
    broken.push({
      id: "untrusted_read_then_send",
      message: `\`${action.name}\` (${categoriesText(action)}) was accepted after untrusted content from \`${call.untrustedRead}\` was read, without a person`,
    });
  }
  return broken;
}

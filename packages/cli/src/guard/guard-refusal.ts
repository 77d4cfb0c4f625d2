import type { Decision, Reason, Route } from "@acp/core";
import type { GateStop, GateVerdict } from "@acp/proxy";

/**
 * Why a guarded call did not run: the gate's reasons ({@link GateStop}: `refused`, `denied`, `not_given`,
 * `expired`, `withdrawn`, `edit_refused`), `credentials_failed` (the vault entry could not be put in),
 * `audit_failed` (a step could not be recorded, so nothing ran) or `guard_closed` (called after `close()`);
 * or why a call that **ran** gives no result ({@link GuardRefusal.ran}): `result_withheld` (its result holds
 * what the guard cannot check for the vault's secret values, such as a class instance, so nobody gets it)
 * or `ran_unaudited` (its completion could not be recorded in the audit log, so its result is withheld).
 */
export type GuardStop =
  GateStop | "credentials_failed" | "audit_failed" | "guard_closed" | "result_withheld" | "ran_unaudited";

/** The stops of a call whose function ran: it must not be taken for one that did not, and run again. */
const RAN: ReadonlySet<GuardStop> = new Set<GuardStop>(["result_withheld", "ran_unaudited"]);

/** What a {@link GuardRefusal} is made of. */
export interface GuardRefusalInit {
  readonly stop: GuardStop;
  readonly message: string;
  readonly server: string;
  readonly tool: string;
  /** The decision the call was stopped under, when the pipeline decided. */
  readonly decision?: Decision;
}

/**
 * Thrown by a guarded function whose call did not run, or ran but gives no result (`ran`). `message` is
 * the text `acp proxy` gives an agent for the same stop (``refused by policy rule `no-money`: …``,
 * `denied by a person: …`; `the call ran, but …` when it ran), fit to hand back to the model as the tool's
 * answer; `stop`, `ran`, `route`, `rule` and `reasons` are for the program.
 */
export class GuardRefusal extends Error {
  override readonly name = "GuardRefusal";
  readonly stop: GuardStop;
  /**
   * Whether the function ran (`result_withheld`, `ran_unaudited`): its effects happened, only the result
   * is withheld, so the call must not be retried as one that did not run (a second payment).
   */
  readonly ran: boolean;
  readonly server: string;
  readonly tool: string;
  /** The route the pipeline chose (`refuse`, or `ask`/`defer` when nobody approved); absent when it did not decide. */
  readonly route: Route | undefined;
  /** The deciding rule (`policy:no-money`), or null when no rule decided. */
  readonly rule: string | null;
  /** Every source's reasons, strictest first, as the audit records them. */
  readonly reasons: readonly Reason[];

  constructor(init: GuardRefusalInit) {
    super(init.message);
    this.stop = init.stop;
    this.ran = RAN.has(init.stop);
    this.server = init.server;
    this.tool = init.tool;
    this.route = init.decision?.route;
    this.rule = init.decision?.rule ?? null;
    this.reasons = init.decision?.reasons ?? [];
  }
}

/** Whether `value` is a {@link GuardRefusal} (also across copies of the package). */
export function isGuardRefusal(value: unknown): value is GuardRefusal {
  return value instanceof GuardRefusal || (value instanceof Error && value.name === "GuardRefusal" && "stop" in value);
}

/** The refusal of a call the gate answered instead of letting it through. */
export function refusalOfVerdict(
  verdict: Extract<GateVerdict, { kind: "answer" }>,
  call: { readonly server: string; readonly tool: string },
): GuardRefusal {
  const first = verdict.result.content?.[0];
  const message = first?.type === "text" ? first.text : `refused: ${verdict.stop}`;
  return new GuardRefusal({ stop: verdict.stop, message, ...call, decision: verdict.decision });
}

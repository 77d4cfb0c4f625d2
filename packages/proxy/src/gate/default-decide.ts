import type { Decision } from "@acp/core";
import type { Decide } from "./types.js";

/** Options of {@link createDefaultDecide}: where the policy would come from once wired. */
export interface DefaultDecideOptions {
  /** `--policy FILE` or `defaults.policy` from config.yml. */
  readonly policyPath?: string;
  /** `$ACP_HOME`. */
  readonly home?: string;
}

/**
 * THE SEAM for the decision pipeline: `acp proxy` builds its `Decide` here. Until the real pipeline is
 * wired in, it refuses every call with a clear reason (fail closed). The integrator replaces this one
 * function's body with the real pipeline (policy, graph, contract, session sources).
 */
export function createDefaultDecide(options: DefaultDecideOptions = {}): Decide {
  const where = options.policyPath !== undefined ? ` (policy \`${options.policyPath}\` not loaded)` : "";
  return (request) => {
    const decision: Decision = {
      route: "refuse",
      action: "deny",
      rule: null,
      category: request.category ?? "system",
      risk_level: request.risk_level ?? "high",
      reasons: [
        {
          source: "pipeline",
          code: "pipeline_not_wired",
          message: `the decision pipeline is not wired into \`acp proxy\` yet${where}; every call is refused`,
        },
      ],
      verdicts: [],
    };
    return Promise.resolve(decision);
  };
}

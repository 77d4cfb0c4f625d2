import { auditEventInput, type Pipeline, type RateLimiter } from "@acp/core";
import { buildPipelineWith, type DecisionInputs } from "../decision/load.js";
import { createReloadingPipeline, loadStartPolicy } from "./decide.js";
import { createReloadingPolicy, type PolicyVersion } from "./policy-reload.js";
import type { AuditAppender } from "@acp/server";

/** The pipelines `acp serve` hands the service: the live one and the console simulator's. */
export interface ServePipelines {
  readonly pipeline: (rateLimiter: RateLimiter) => Pipeline;
  readonly simulationPipeline: Pipeline;
}

/**
 * The service's pipelines over a policy file that is picked up again when it changes (as `acp proxy` does,
 * docs/reference/policy.md): both share one {@link createReloadingPolicy}, so the simulator judges with the
 * policy in force. Each node reloads from its own file and records the reload in the chain it appends to
 * (`audit()`, bound once the stores are open; before that a reload refuses the decision).
 */
export function createServePipelines(
  inputs: DecisionInputs,
  options: { readonly log: (line: string) => void; readonly audit: () => AuditAppender | undefined },
): ServePipelines {
  // read again for its bytes' hash; a file changed since `inputs` were read is judged as it is now
  const policy = createReloadingPolicy({
    file: inputs.policyFile,
    initial: loadStartPolicy(inputs.policyFile, false, options.log),
    log: options.log,
    record: (eventType, fields) => {
      const audit = options.audit();
      if (audit === undefined) return Promise.reject(new Error("the audit log is not open"));
      return audit.append(auditEventInput(eventType, fields));
    },
  });
  const withPolicy = (version: PolicyVersion): DecisionInputs => ({ ...inputs, policy: version.policy });
  return {
    // a request's annotations come from whoever calls the service: a claim that only tightens the decision
    pipeline: (rateLimiter) =>
      createReloadingPipeline(policy, (version) =>
        buildPipelineWith(withPolicy(version), { rateLimiter, annotations: "caller" }),
      ),
    // the simulator and the judging of a person's edits neither spend nor check rate limits: a simulation
    // is no call, and an edited call was counted when it was asked
    simulationPipeline: createReloadingPipeline(policy, (version) =>
      buildPipelineWith(withPolicy(version), { spendRateLimits: false, annotations: "caller" }),
    ),
  };
}

import {
  auditEventInput,
  type AttestationLedger,
  type Pipeline,
  type ProposalLedger,
  type RateLimiter,
} from "@acp/core";
import { buildPipelineWith, type DecisionInputs } from "../decision/load.js";
import { createReloadingPipeline, loadStartPolicy } from "./decide.js";
import { createReloadingPolicy, type PolicyVersion } from "./policy-reload.js";
import { anyServerPipelineOf, countOncePerCall, useAttestationOncePerCall } from "@acp/server/state";
import type { AuditAppender, ServerReadingInputs, StoresPipeline } from "@acp/server";

/** The pipelines `acp serve` hands the service: the live one and the console simulator's. */
export interface ServePipelines {
  readonly pipeline: StoresPipeline;
  readonly simulationPipeline: Pipeline;
  /**
   * `pipeline` for callers whose `server` is their own word (all but named agents held to servers by
   * serve.agent_servers): on the policy as `anyServerPolicy` makes it, judged under every reading of that
   * word the `classify:` entries and the graph mapping tell apart, the strictest standing
   * (`anyServerPipelineOf`).
   */
  readonly anyServerPipeline: StoresPipeline;
  /** `simulationPipeline` judged so: those callers' edited arguments, and the console simulator for them. */
  readonly anyServerRecheckPipeline: Pipeline;
}

/** The stores' ledgers a pipeline is built on, those given. */
function ledgers(
  proposals: ProposalLedger | undefined,
  attestations: AttestationLedger | undefined,
): { proposals?: ProposalLedger; attestations?: AttestationLedger } {
  return {
    ...(proposals !== undefined ? { proposals } : {}),
    ...(attestations !== undefined ? { attestations } : {}),
  };
}

/**
 * `inputs` with the trusted-channel keys (`serve.trusted_channel_keys`, opened) in the graph's settings: an
 * attestation `POST /v1/decide` carries verifies with them. Unchanged without keys or without a graph.
 */
export function withTrustedChannelKeys(
  inputs: DecisionInputs,
  keys: Readonly<Record<string, string>> | undefined,
): DecisionInputs {
  if (keys === undefined || Object.keys(keys).length === 0 || inputs.graphSettings === undefined) return inputs;
  return { ...inputs, graphSettings: { ...inputs.graphSettings, trustedChannelKeys: keys } };
}

/** `inputs` as one reading of a caller's `server` sees them (ADR 0006): its policy and graph mapping. */
export function readingInputsOf(inputs: DecisionInputs, r: ServerReadingInputs): DecisionInputs {
  const settings = inputs.graphSettings;
  if (settings === undefined) return { ...inputs, policy: r.policy };
  const { mapping, ...others } = settings;
  // reviews stay bound to the configured mapping, not to the part of it this reading sees
  const reviewedMapping = settings.reviewedMapping ?? mapping;
  const rest = reviewedMapping !== undefined ? { ...others, reviewedMapping } : others;
  const graphSettings = r.mapping !== undefined ? { ...rest, mapping: r.mapping } : rest;
  return { ...inputs, policy: r.policy, graphSettings };
}

/**
 * `acp serve`'s pipeline for a caller whose `server` is only its word, on fixed `inputs` (no reload): every
 * reading judged, the strictest answer standing, annotations taken as the caller's claim, each rate limit
 * spent once a call on `rateLimiter`. `acp policy simulate --unverified-server` answers with it.
 */
export function unverifiedServerPipeline(inputs: DecisionInputs, rateLimiter: RateLimiter): Pipeline {
  const once = countOncePerCall(rateLimiter);
  return anyServerPipelineOf(inputs.policy, inputs.graphSettings?.mapping, (r, spend) =>
    buildPipelineWith(readingInputsOf(inputs, r), { rateLimiter: once, spendRateLimits: spend, annotations: "caller" }),
  );
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
  // a caller whose `server` is only its word: judged under every reading of it the policy's `classify:` and
  // the graph mapping tell apart, the strictest answer standing (ADR 0006, `anyServerPipelineOf`)
  const readingInputs = (r: ServerReadingInputs): DecisionInputs => readingInputsOf(inputs, r);
  const anyServer = (version: PolicyVersion, build: (inputs: DecisionInputs, spend: boolean) => Pipeline): Pipeline =>
    anyServerPipelineOf(version.policy, inputs.graphSettings?.mapping, (r, spend) => build(readingInputs(r), spend));
  return {
    // a request's annotations come from whoever calls the service: a claim that only tightens the decision
    // the stores' proposal ledger: a cooling period counts from the first sight any node recorded, across restarts
    // and its attestation ledger: a trusted-channel attestation is taken once by every node
    pipeline: (rateLimiter, proposals, attestations) =>
      createReloadingPipeline(policy, (version) =>
        buildPipelineWith(withPolicy(version), {
          rateLimiter,
          annotations: "caller",
          ...ledgers(proposals, attestations),
        }),
      ),
    // the simulator and the judging of a person's edits neither spend nor check rate limits: a simulation
    // is no call, and an edited call was counted when it was asked
    simulationPipeline: createReloadingPipeline(policy, (version) =>
      buildPipelineWith(withPolicy(version), { spendRateLimits: false, annotations: "caller" }),
    ),
    // the same, for a caller whose `server` is only its word: a deny or ask rule for a server holds whatever
    // server it names, or none (docs/guides/serve.md, "Which server a request is for")
    // every reading spends the limit of the rule it matched, each limit once per call (countOncePerCall)
    // the judgings that spend take the call's attestation once between them (useAttestationOncePerCall); the
    // others only check it (each keeps its own ledger in memory: the one that spends refuses a replay)
    anyServerPipeline: (rateLimiter, proposals, attestations) => {
      const once = countOncePerCall(rateLimiter);
      const used = attestations !== undefined ? useAttestationOncePerCall(attestations) : undefined;
      return createReloadingPipeline(policy, (version) =>
        anyServer(version, (built, spend) =>
          buildPipelineWith(built, {
            rateLimiter: once,
            spendRateLimits: spend,
            annotations: "caller",
            ...ledgers(proposals, spend ? used : undefined),
          }),
        ),
      );
    },
    anyServerRecheckPipeline: createReloadingPipeline(policy, (version) =>
      anyServer(version, (built) => buildPipelineWith(built, { spendRateLimits: false, annotations: "caller" })),
    ),
  };
}

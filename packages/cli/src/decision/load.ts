import { join } from "node:path";
import {
  compilePolicy,
  createMemoryRateLimiter,
  createPipeline,
  contractSource,
  formatIssue,
  graphSource,
  parseConsentGraph,
  parsePolicy,
  policySource,
  type CompiledPolicy,
  type ConsentGraph,
  type DecisionSource,
  type Pipeline,
  type Policy,
  type ProposalLedger,
  type AttestationLedger,
  type RateLimiter,
} from "@acp/core";
import { consentGraphFileExists } from "@acp/store";
import { resolveHome, resolvePath, type CliIo } from "../context.js";
import { resolvePolicyPath } from "../wiring/policy-path.js";
import { readConfigFile } from "../wiring/config-file.js";
import { CliError, EXIT } from "../exit-codes.js";
import { readInputFile } from "./read-input.js";
import { graphSourceOptions, loadGraphSettings, type GraphSettings } from "./graph-config.js";

/** What a command needs to decide: the policy, the graph (optional) and where they came from. */
export interface DecisionInputs {
  readonly policy: Policy;
  readonly policyFile: string;
  readonly graph?: ConsentGraph;
  readonly graphFile?: string;
  /** The graph file as the person named it (`--graph`, a test file's `graph:`); absent for the home's own. */
  readonly graphNamed?: string;
  /** `graph.mapping` / `graph.threshold` from config.yml and the review record. */
  readonly graphSettings?: GraphSettings;
}

/** Reads and validates a policy file; invalid → CliError exit 4 listing every problem. */
export async function loadPolicyFile(file: string): Promise<Policy> {
  const text = await readInputFile(file, "policy");
  const parsed = parsePolicy(text, { file });
  if (!parsed.ok) {
    throw new CliError(`invalid policy:\n${parsed.issues.map((i) => formatIssue(i, file)).join("\n")}`, EXIT.invalid);
  }
  return parsed.value;
}

/** Reads and validates a consent-graph file; invalid → CliError exit 4 listing every problem. */
export async function loadGraphFile(file: string): Promise<ConsentGraph> {
  const text = await readInputFile(file, "consent graph");
  const parsed = parseConsentGraph(text, { file });
  if (!parsed.ok) {
    throw new CliError(
      `invalid consent graph:\n${parsed.issues.map((i) => formatIssue(i, file)).join("\n")}`,
      EXIT.invalid,
    );
  }
  return parsed.value;
}

/**
 * Loads the policy (`--policy` or `$ACP_HOME/policy.yml`) and the graph (`--graph`, or
 * `$ACP_HOME/consent-graph.json` when it exists), with the graph's `graph:` settings from `--config FILE`
 * (checked even without a graph) or `$ACP_HOME/config.yml`.
 */
export async function loadDecisionInputs(
  io: CliIo,
  options: { policy?: string | undefined; graph?: string | undefined; config?: string | undefined },
): Promise<DecisionInputs> {
  const home = resolveHome(io);
  const configFile = options.config !== undefined ? resolvePath(io, options.config) : undefined;
  // read once: a `--config` named pipe (`<(…)`) holds what was written into it once
  const config = readConfigFile(configFile ?? join(home, "config.yml"), configFile !== undefined);
  const choice = resolvePolicyPath(io, home, options.policy, config);
  const policyFile = choice.path;
  if (choice.isDefault) {
    // said as every command says a missing file (docs/reference/cli.md), with what to do
    throw new CliError(
      `cannot read policy \`${policyFile}\`: no such file (run \`acp init\` to create one, or pass --policy FILE)`,
      EXIT.error,
    );
  }
  const policy = await loadPolicyFile(policyFile);
  let graphFile: string | undefined;
  if (options.graph !== undefined) graphFile = resolvePath(io, options.graph);
  else if (consentGraphFileExists(join(home, "consent-graph.json"))) graphFile = join(home, "consent-graph.json");
  if (graphFile === undefined) {
    // a config file named on the command line is checked even when there is no graph to apply it to
    if (configFile !== undefined) loadGraphSettings(home, config);
    return { policy, policyFile };
  }
  const graphSettings = loadGraphSettings(home, config);
  return {
    policy,
    policyFile,
    graph: await loadGraphFile(graphFile),
    graphFile,
    ...(options.graph !== undefined ? { graphNamed: options.graph } : {}),
    graphSettings,
  };
}

/** Builds the one pipeline from loaded inputs: policy rules, consent graph when present, action contract. */
export function buildPipeline(inputs: DecisionInputs, rateLimiter: RateLimiter = createMemoryRateLimiter()): Pipeline {
  return buildPipelineWith(inputs, { rateLimiter });
}

/** What `buildPipelineWith` may add to or reuse in the built-in pipeline. */
export interface PipelineExtras {
  /** The policy compiled once, for callers that build many pipelines (one per replayed trace). */
  readonly compiled?: CompiledPolicy;
  /** The rate-limit state; a fresh in-memory one when absent. */
  readonly rateLimiter?: RateLimiter;
  /**
   * When the consent graph first saw each proposal (a store's, so a cooling period survives a restart); the
   * graph source keeps one in memory when absent.
   */
  readonly proposals?: ProposalLedger;
  /**
   * The trusted-channel attestations already used (a store's, so every node takes one once); the graph
   * source keeps one in memory when absent.
   */
  readonly attestations?: AttestationLedger;
  /** More sources, judged after the built-in ones (e.g. a session runtime). */
  readonly extraSources?: readonly DecisionSource[];
  /** False: rate limits are neither spent nor checked (judging a person's edit of a call already counted). */
  readonly spendRateLimits?: boolean;
  /**
   * Who wrote a request's `annotations`: `server` (default; the proxy reads them from the upstream's tool
   * listing) or `caller` (`acp serve`: whoever calls the API sends them, so they are a claim that can only
   * tighten the decision, as a claimed `category` can; `annotationsAsClaim` of `@acp/core`).
   */
  readonly annotations?: "server" | "caller";
}

/** Like `buildPipeline`, with a precompiled policy, a rate limiter and extra sources (a session). */
export function buildPipelineWith(inputs: DecisionInputs, extras: PipelineExtras = {}): Pipeline {
  const rateLimiter = extras.rateLimiter ?? createMemoryRateLimiter();
  const compiled = extras.compiled ?? compilePolicy(inputs.policy);
  const sources: DecisionSource[] = [
    policySource(compiled, {
      rateLimiter,
      ...(extras.spendRateLimits !== undefined ? { spendRateLimits: extras.spendRateLimits } : {}),
    }),
  ];
  if (inputs.graph !== undefined) {
    const { mapping, context } = graphSourceOptions(inputs.graphSettings ?? {});
    sources.push(
      graphSource({
        graph: inputs.graph,
        ...(mapping !== undefined ? { mapping } : {}),
        context: {
          ...context,
          ...(inputs.graphNamed !== undefined ? { graphFile: inputs.graphNamed } : {}),
          ...(extras.proposals !== undefined ? { proposals: extras.proposals } : {}),
          ...(extras.attestations !== undefined ? { attestations: extras.attestations } : {}),
        },
      }),
    );
  }
  sources.push(contractSource(), ...(extras.extraSources ?? []));
  return createPipeline(sources, {
    classify: inputs.policy.classify,
    ...(extras.annotations !== undefined ? { annotations: extras.annotations } : {}),
  });
}

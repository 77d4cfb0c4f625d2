import { existsSync } from "node:fs";
import { join } from "node:path";
import {
  compilePolicy,
  contractSource,
  type ActionRequest,
  createCallerBudget,
  createMemoryRateLimiter,
  createPipeline,
  decideWithin,
  formatIssue,
  graphSource,
  parseConsentGraph,
  parsePolicy,
  policySource,
  type DecisionSource,
  type CallerBudgetOptions,
  type ClassificationOverride,
  type ConsentGraph,
  type Decision,
  type Pipeline,
  type RateLimiter,
} from "@acp/core";
import type { ProxySessionRuntime } from "./session-runtime.js";
import {
  STARTER_POLICY,
  consentGraphFileExists,
  createSqliteProposalLedger,
  createSqliteRateLimiter,
} from "@acp/store";
import type { Database } from "better-sqlite3";
import { graphReviews, graphSourceOptions, type GraphConfig } from "../decision/graph-config.js";
import type { Decide, DecideContext } from "@acp/proxy";
import { CliError, EXIT } from "../exit-codes.js";
import { readInputFileSync } from "../decision/read-input.js";
import type { HomeState } from "./home-state.js";
import {
  createReloadingPolicy,
  policyHash,
  readPolicyVersion,
  type PolicyVersion,
  type ReloadingPolicy,
} from "./policy-reload.js";

/** Options of the proxy's decision function. */
export interface PipelineDecideOptions {
  readonly state: HomeState;
  /** The policy file; when it is the home's default and missing, the built-in starter policy is used. */
  readonly policyPath: string;
  readonly policyIsDefault: boolean;
  /**
   * The `graph:` section of the config file in use (`--config FILE`, else `$ACP_HOME/config.yml`), already
   * checked: the mapping and threshold for the home's consent graph. The graph and its reviews stay the home's.
   */
  readonly graph: GraphConfig;
  readonly now: () => Date;
  readonly log: (line: string) => void;
  /** The session runtime: one per downstream session, judging every call as the `session` source. */
  readonly sessions?: (classify: readonly ClassificationOverride[]) => ProxySessionRuntime;
  /**
   * Where a reload of the policy file is audited (`policy_reloaded`, `policy_reload_refused`); decisions on
   * the new policy wait for it. Absent: reloads are only said on stderr.
   */
  readonly record?: (eventType: string, fields: Record<string, unknown>) => unknown;
  /**
   * Each caller's share of the policy work (core's `createCallerBudget`): the agent a session's token names
   * (`proxy.agent_tokens`), or every session without one together, is refused unjudged
   * (`caller_budget_exhausted`) once its decisions have spent it, so one agent of an `acp proxy --http` cannot
   * hold the thread for the others. Default: the default share (as `acp serve`'s); `false`: none.
   */
  readonly callerBudget?: CallerBudgetOptions | false;
}

/**
 * The policy a front end starts with: the file (exit 1 unreadable, exit 4 with every problem invalid), or the
 * built-in starter policy when the file is the home's default and missing. Its version is the `sha256:` of
 * the file's bytes (`sha256sum policy.yml`).
 */
export function loadStartPolicy(path: string, isDefault: boolean, log: (line: string) => void): PolicyVersion {
  if (!existsSync(path)) {
    if (!isDefault) throw new CliError(`cannot read policy \`${path}\`: no such file`, EXIT.error);
    log(`no policy at ${path}: using the built-in starter policy (run \`acp init\` to write one)`);
    const starter = parsePolicy(STARTER_POLICY, { file: "<starter policy>" });
    if (!starter.ok) throw new CliError("the built-in starter policy does not validate", EXIT.error);
    return { policy: starter.value, hash: policyHash(STARTER_POLICY) };
  }
  // opened without blocking: a named pipe there is refused at once, not waited on
  const read = readPolicyVersion(path);
  if (read.ok) return read.version;
  if (read.unreadable !== undefined)
    throw new CliError(`cannot read policy \`${path}\`: ${read.unreadable}`, EXIT.error);
  throw new CliError(`invalid policy:\n${read.problems.join("\n")}`, EXIT.invalid);
}

/**
 * A pipeline over a policy that is picked up again when its file changes ({@link createReloadingPolicy}):
 * each version is compiled and built once, when it comes into force; every decision names the version it
 * used (`policy_hash`), and none uses a new version before its reload is audited.
 */
export function createReloadingPipeline(
  policy: ReloadingPolicy,
  build: (version: PolicyVersion) => Pipeline,
): Pipeline & { readonly policy: ReloadingPolicy } {
  let built: { version: PolicyVersion; pipeline: Pipeline } | undefined;
  const pipelineOf = (version: PolicyVersion): Pipeline => {
    if (built?.version !== version) built = { version, pipeline: build(version) };
    return built.pipeline;
  };
  return {
    policy,
    async decide(request, now) {
      const version = policy.current();
      const audited = policy.recorded();
      if (audited !== null) await audited;
      return named(pipelineOf(version).decide(request, now), version);
    },
  };
}

/** One policy version with the pipelines built on it. */
interface BuiltPolicy {
  readonly version: PolicyVersion;
  readonly sources: readonly DecisionSource[];
  readonly pipeline: Pipeline;
  /** The same policy, graph and contract, spending no rate limit (a person's edit of a call already counted). */
  readonly recheck: Pipeline;
}

/** A decision naming the policy version it used (`policy_hash`), which the front end's audit records. */
function named(decision: Promise<Decision>, version: PolicyVersion): Promise<Decision> {
  return decision.then((d) => ({ ...d, policy_hash: version.hash }));
}

/**
 * The home's consent graph (`$ACP_HOME/consent-graph.json`), validated; null when there is none. Invalid →
 * exit 4 with every problem (what `acp doctor` reports too).
 */
export function readHomeConsentGraph(home: string): ConsentGraph | null {
  const file = join(home, "consent-graph.json");
  if (!consentGraphFileExists(file)) return null; // a link to nothing is read, and refused, not skipped
  const graph = parseConsentGraph(readInputFileSync(file, "consent graph"), { file });
  if (!graph.ok) {
    const lines = graph.issues.map((i) => formatIssue(i, file)).join("\n");
    throw new CliError(`invalid consent graph:\n${lines}`, EXIT.invalid);
  }
  return graph.value;
}

/**
 * The home's consent graph as a source; with the home's `state.db`, its proposal ledger is kept there (a
 * cooling period counts from the first sight any process recorded, across restarts), else in memory.
 */
function graphSourceOf(options: PipelineDecideOptions, db: Database | null): DecisionSource | null {
  const graph = readHomeConsentGraph(options.state.home);
  if (graph === null) return null;
  const settings = { ...graphReviews(options.state.home), ...options.graph };
  const { mapping, context } = graphSourceOptions(settings);
  const proposals = db !== null ? { proposals: createSqliteProposalLedger(db) } : {};
  return graphSource({ graph, ...(mapping !== undefined ? { mapping } : {}), context: { ...context, ...proposals } });
}

/**
 * The proxy's `Decide`: the one pipeline over the policy, the home's consent graph (when present, with
 * `graph`'s mapping and threshold) and the action contract, with rate limits kept in `state.db` (or memory without a home). Never throws.
 * `recheckEdits` judges arguments a person edited: the same policy, graph and contract, spending no rate
 * limit (the call was counted when it was asked) and without the session (the edit is the person's).
 */
export function createPipelineDecide(
  options: PipelineDecideOptions,
): Decide & { readonly recheckEdits: Decide; readonly classify: () => readonly ClassificationOverride[] } {
  const initial = loadStartPolicy(options.policyPath, options.policyIsDefault, options.log);
  const policy = createReloadingPolicy({
    file: options.policyPath,
    initial,
    log: options.log,
    record: (eventType, fields) => options.record?.(eventType, fields),
  });
  const db = options.state.db();
  const rateLimiter: RateLimiter = db === null ? createMemoryRateLimiter() : createSqliteRateLimiter(db);
  const graph = graphSourceOf(options, db);
  const rest: DecisionSource[] = graph !== null ? [graph, contractSource()] : [contractSource()];
  // the session runtime keeps the `classify:` entries of the policy it started with (docs/reference/policy.md)
  const runtime = options.sessions?.(initial.policy.classify);
  // each version compiled and built once, when it comes into force
  const build = (version: PolicyVersion): BuiltPolicy => {
    const compiled = compilePolicy(version.policy);
    const classify = version.policy.classify;
    const sources = [policySource(compiled, { rateLimiter }), ...rest];
    return {
      version,
      sources,
      pipeline: createPipeline(sources, { classify }),
      recheck: createPipeline([policySource(compiled, { spendRateLimits: false }), ...rest], { classify }),
    };
  };
  let built = build(initial);
  // the pipelines of the policy in force; a promise only while a reload's audit event is being recorded
  const inForce = (): BuiltPolicy | Promise<BuiltPolicy> => {
    const version = policy.current();
    const audited = policy.recorded();
    // no decision on a new policy before its reload is recorded
    if (audited !== null) return audited.then(() => builtFor(version));
    return builtFor(version);
  };
  const builtFor = (version: PolicyVersion): BuiltPolicy => {
    if (built.version !== version) built = build(version);
    return built;
  };
  const decideOn = (on: BuiltPolicy, request: ActionRequest, context: DecideContext | undefined): Promise<Decision> => {
    const { version, sources, pipeline } = on;
    if (runtime === undefined || context === undefined) return named(pipeline.decide(request, options.now()), version);
    const withSession = createPipeline([...sources, runtime.sourceFor(context.sessionId, context.tokenAgent)], {
      classify: version.policy.classify,
    });
    return named(withSession.decide(request, options.now()), version);
  };
  const shares = options.callerBudget === false ? null : createCallerBudget(options.callerBudget);
  const decide: Decide = (request, context) =>
    decideWithin(shares, context?.tokenAgent, options.now, () => {
      const on = inForce();
      return on instanceof Promise ? on.then((b) => decideOn(b, request, context)) : decideOn(on, request, context);
    });
  const recheckEdits: Decide = async (request) => {
    const { version, recheck } = await inForce();
    return named(recheck.decide(request, options.now()), version);
  };
  // the `classify:` entries of the policy in force
  const classify = (): readonly ClassificationOverride[] => policy.current().policy.classify;
  return Object.assign(decide, { recheckEdits, classify });
}

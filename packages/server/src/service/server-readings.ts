/**
 * What a caller's `server` may stand for when it is only the caller's word (ADR 0006): the policy's
 * `classify:` entries and the consent graph's mapping may tell servers apart, and dropping their `server:`
 * could loosen a decision as well as tighten it. Such a caller is judged under every reading of its
 * `server` the configuration tells apart — as named, as no server, as each server a `classify:` or mapping
 * entry names — and the strictest decision is its answer (refuse > defer > ask > accept): naming a server
 * earns nothing a reading of the same call for another server would not give.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import {
  compileGlob,
  isGlobPattern,
  keepPolicyWork,
  routeStrictness,
  type ClassificationOverride,
  type Decision,
  type GraphMapping,
  type Pipeline,
  type Policy,
  type RateLimitOutcome,
  type RateLimiter,
  type AttestationLedger,
} from "@acp/core";
import { anyServerPolicy } from "./any-server-policy.js";

/** The configuration a pipeline judges one reading of a caller's `server` with. */
export interface ServerReadingInputs {
  /** The policy as {@link anyServerPolicy} makes it, with `classify:` as the reading sees it. */
  readonly policy: Policy;
  /** The graph mapping as the reading sees it (absent when there is none). */
  readonly mapping: GraphMapping | undefined;
}

/** One reading besides the one as named: what it stands for, and its configuration. */
export interface ServerReading extends ServerReadingInputs {
  /** `no server`, or the `server:` pattern the reading is for. */
  readonly server: string | null;
}

type ServerEntry = { readonly server?: string | undefined };

/** Whether the entry's `server:` holds under the reading for `server` (null: no server). */
function holdsFor(pattern: string, server: string | null): boolean {
  if (server === null) return false;
  if (pattern === server) return true;
  if (isGlobPattern(server)) return false; // two patterns: the reading is for what `server` alone names
  const compiled = compileGlob(pattern);
  return compiled.ok && compiled.value(server);
}

/**
 * The entries as the reading for `server` sees them: an entry without `server:` as it is, one whose
 * `server:` holds for the reading without it (it meets whatever the request names), any other left out.
 */
function entriesFor<T extends ServerEntry>(entries: readonly T[], server: string | null): readonly T[] {
  const seen: T[] = [];
  for (const entry of entries) {
    if (entry.server === undefined) seen.push(entry);
    else if (holdsFor(entry.server, server)) {
      const { server: _held, ...rest } = entry;
      void _held;
      seen.push(rest as unknown as T);
    }
  }
  return seen;
}

/**
 * The readings of a caller's `server` other than as named: none when no `classify:` or mapping entry names
 * a server (the any-server policy alone then judges alike under every reading), else the reading for no
 * server and one for each `server:` pattern those entries write, in the order first written. Each carries
 * the any-server policy with `classify:` and the mapping as that reading sees them.
 */
export function serverReadings(policy: Policy, mapping: GraphMapping | undefined): readonly ServerReading[] {
  const servers: string[] = [];
  for (const entry of [...policy.classify, ...(mapping ?? [])]) {
    if (entry.server !== undefined && !servers.includes(entry.server)) servers.push(entry.server);
  }
  if (servers.length === 0) return [];
  const base = anyServerPolicy(policy);
  return [null, ...servers].map((server) => ({
    server,
    policy: { ...base, classify: entriesFor<ClassificationOverride>(policy.classify, server) },
    mapping: mapping === undefined ? undefined : entriesFor(mapping, server),
  }));
}

/** The reason a decision of another reading carries: which reading it is, and why it counts. */
function readingReason(server: string | null): Decision["reasons"][number] {
  const reading = server === null ? "for no server" : `for server \`${server}\``;
  return {
    source: "pipeline",
    code: "server_unverified",
    message:
      `the request's \`server\` is only the caller's word, and the call judged as if it were ${reading} ` +
      "(a `classify:` or graph mapping entry tells servers apart) is stricter, so that judgement stands",
  };
}

/**
 * Each call's rate-limit outcomes so far, by limit (a rule two readings match is counted once per call), and
 * its trusted-channel attestation uses, by attestation (taken once per call, every reading told the answer).
 */
const callOutcomes = new AsyncLocalStorage<Map<string, RateLimitOutcome | boolean | Promise<boolean>>>();

/**
 * `limiter`, counting each rate limit at most once per call of a pipeline {@link anyServerPipelineOf} makes:
 * every reading of a caller's `server` spends the limit of the rule it matched, and a rule several readings
 * match is counted once, the later readings told the first outcome. Outside such a call it is `limiter`.
 * Build every spending pipeline handed to `anyServerPipelineOf` on it: without it a rule two readings match
 * is counted twice a call (stricter, never looser).
 */
export function countOncePerCall(limiter: RateLimiter): RateLimiter {
  return {
    consume(key, limit, windowMs, nowMs) {
      const outcomes = callOutcomes.getStore();
      if (outcomes === undefined) return limiter.consume(key, limit, windowMs, nowMs);
      const which = `${key}\u0000${limit}\u0000${windowMs}`;
      const counted = outcomes.get(which);
      if (counted !== undefined && typeof counted === "object" && !(counted instanceof Promise)) return counted;
      const remember = (outcome: RateLimitOutcome): RateLimitOutcome => (outcomes.set(which, outcome), outcome);
      const outcome = limiter.consume(key, limit, windowMs, nowMs);
      return outcome instanceof Promise ? outcome.then(remember) : remember(outcome);
    },
  };
}

/**
 * `ledger`, taking each trusted-channel attestation at most once per call of a pipeline
 * {@link anyServerPipelineOf} makes: the call as named and every reading that spends judge the same
 * attestation, and the later ones are told the first answer (a second use would read as a replay). Outside
 * such a call it is `ledger`. Build every spending pipeline handed to `anyServerPipelineOf` on it.
 */
export function useAttestationOncePerCall(ledger: AttestationLedger): AttestationLedger {
  return {
    use(key, expiresAt, now) {
      const outcomes = callOutcomes.getStore();
      if (outcomes === undefined) return ledger.use(key, expiresAt, now);
      const which = `attestation\u0000${key}`;
      const used = outcomes.get(which);
      if (typeof used === "boolean" || used instanceof Promise) return used;
      const answer = ledger.use(key, expiresAt, now);
      outcomes.set(which, answer);
      return answer;
    },
  };
}

/** A reading besides the one as named: what it stands for, judged without and with spending rate limits. */
interface JudgedReading {
  readonly server: string | null;
  readonly pipeline: Pipeline;
  /** The same judging the rate limit of the rule it matches (absent: the policy has no rate limit). */
  readonly spending?: Pipeline;
}

/**
 * A pipeline that judges a request under each reading and answers the strictest decision; ties go to the
 * one as named. `named` judges the configuration as it is (the any-server policy) spending rate limits,
 * `namedCheck` the same without spending them, each reading's `pipeline` another reading without spending
 * them. The other readings are judged first: when one refuses and the call as named would not, the answer
 * is that refusal and nothing is spent. Otherwise `named` judges (and spends), then each reading's
 * `spending` pipeline: every reading spends the rate limit of the rule it matched, each limit once per call
 * ({@link countOncePerCall}), so a limit that only another reading of the caller's `server` meets still
 * holds (its refusal is the strictest answer); a stricter reading's decision replaces the one as named.
 */
export function strictestReadingPipeline(
  named: Pipeline,
  namedCheck: Pipeline,
  readings: readonly JudgedReading[],
): Pipeline {
  if (readings.length === 0) return named;
  return {
    async decide(request, now) {
      // every decision judged: the answer carries their policy work together (a caller's share counts it all)
      const judged: Decision[] = [];
      const judge = (pipeline: Pipeline): Promise<Decision> =>
        pipeline.decide(request, now).then((decision) => (judged.push(decision), decision));
      let strictest: { decision: Decision; server: string | null } | undefined;
      const consider = (decision: Decision, server: string | null): void => {
        if (strictest === undefined || routeStrictness(decision.route) > routeStrictness(strictest.decision.route))
          strictest = { decision, server };
      };
      for (const reading of readings) {
        const decision = await judge(reading.pipeline);
        consider(decision, reading.server);
        if (decision.route === "refuse") break;
      }
      if (strictest === undefined) return named.decide(request, now);
      if (strictest.decision.route === "refuse") {
        // refused as named too (an invalid request, a deny for any server): said as named, nothing spent
        const own = await judge(namedCheck);
        if (own.route === "refuse") return keepPolicyWork(own, judged);
      } else {
        // each limit counted once for the call, whichever readings meet it
        const own = await callOutcomes.run(new Map(), async () => {
          const asNamed = await judge(named);
          if (asNamed.route === "refuse") return asNamed;
          for (const reading of readings) {
            if (reading.spending === undefined) continue;
            const decision = await judge(reading.spending);
            consider(decision, reading.server);
            if (decision.route === "refuse") break;
          }
          return asNamed;
        });
        if (routeStrictness(own.route) >= routeStrictness(strictest.decision.route)) return keepPolicyWork(own, judged);
      }
      const { decision, server } = strictest;
      return keepPolicyWork({ ...decision, reasons: [...decision.reasons, readingReason(server)] }, judged);
    },
  };
}

/** Whether a rule of `policy` has a rate limit a call it matches spends (a `deny` rule's spends nothing). */
function hasRateLimits(policy: Policy): boolean {
  return policy.rules.some((rule) => rule.rate_limit !== undefined && rule.action !== "deny");
}

/**
 * The pipeline for a caller whose `server` is only its word, built in one place for every front end:
 * `build` makes a pipeline on one reading's configuration, spending rate limits when `spend` is true (a
 * pipeline that never spends them, such as the re-check of a person's edit, may ignore it). The spending
 * pipelines must draw on a limiter wrapped in {@link countOncePerCall}: every reading spends the limit of the
 * rule it matched, each once per call. For a caller held to servers, build on the policy and mapping as they
 * are instead.
 */
export function anyServerPipelineOf(
  policy: Policy,
  mapping: GraphMapping | undefined,
  build: (inputs: ServerReadingInputs, spend: boolean) => Pipeline,
): Pipeline {
  const asNamed: ServerReadingInputs = { policy: anyServerPolicy(policy), mapping };
  const limited = hasRateLimits(policy);
  const readings = serverReadings(policy, mapping).map((reading) => ({
    server: reading.server,
    pipeline: build(reading, false),
    ...(limited ? { spending: build(reading, true) } : {}),
  }));
  const named = build(asNamed, true);
  return readings.length === 0 ? named : strictestReadingPipeline(named, build(asNamed, false), readings);
}

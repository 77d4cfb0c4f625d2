/**
 * The decision service's refusals (queue full, agent mismatch, session namespace, audit unavailable) and
 * the rule for which agent a request is recorded under.
 */
import type { PendingInsertResult, PendingLimit } from "@acp/store";
import { HttpError } from "../http/error-body.js";
import { CallerPendingFullError } from "./pending-share.js";

/** Thrown when too many consent requests already wait (or arrive at once: `max` null). */
export class ConsentQueueFullError extends Error {
  /**
   * True when the request found no turn to be counted in time (`max` null): a moment later it may be, so the
   * 429 says `Retry-After: 1`. A full queue empties only as people answer, which no one can time.
   */
  readonly busy: boolean;
  constructor(max: number | null, agent?: string) {
    super(
      max === null
        ? "too many consent requests are being made at once: this one could not be counted against the limit " +
            "in time; try again shortly"
        : agent === undefined
          ? `too many consent requests are waiting (at most ${max}); try again later`
          : `agent \`${agent.length > 64 ? `${agent.slice(0, 64)}…` : agent}\` has ${max} consent requests waiting, ` +
            `the most one agent may (the others' requests are not held up by it); try again later`,
    );
    this.name = "ConsentQueueFullError";
    this.busy = max === null;
  }
}

/**
 * The refusal of a request the store found no room for, or no turn to count it in time (`busy`); a caller
 * whose own share is full gets a {@link CallerPendingFullError} (the service refuses it, not a 429).
 */
export function queueFull(full: Exclude<PendingInsertResult, { readonly ok: true }>, limit: PendingLimit): Error {
  if (full.full === "busy") return new ConsentQueueFullError(null);
  if (full.full === "caller") return new CallerPendingFullError(full.max, limit.perCaller?.caller ?? undefined);
  const agent = full.full === "agent" ? limit.perAgent?.agent : undefined;
  return new ConsentQueueFullError(full.max, agent);
}

/**
 * Thrown when a caller whose token names its agent (`serve.agent_tokens`) sends a request naming another
 * agent, or a caller whose token names none (`caller` undefined: the unnamed agents' token, an open loopback
 * API, `--stdio`) names an agent that has a token of its own: the audit records who asked as the token says,
 * never as the body claims, so no other caller can plant events in a named agent's audit view.
 */
export class AgentMismatchError extends Error {
  constructor(caller: string | undefined, claimed: string) {
    super(
      caller === undefined
        ? `agent \`${claimed.slice(0, 100)}\` has a token of its own (serve.agent_tokens): only a request made ` +
            "with it is recorded as that agent's (with this token, leave the agent out or name another)"
        : `this token belongs to agent \`${caller}\`; the request names agent \`${claimed.slice(0, 100)}\` ` +
            "(leave the agent out, or name the token's own)",
    );
    this.name = "AgentMismatchError";
  }
}

/**
 * Thrown when a caller whose agent is held to some servers (`serve.agent_servers`) sends a request naming
 * another server, or none: the `server` of a request is the caller's claim, which policy rules with
 * `server:` trust, so an agent may claim only the servers it was given.
 */
export class ServerNotAllowedError extends Error {
  constructor(caller: string, patterns: readonly string[], claimed: string | undefined) {
    const allowed = patterns.map((p) => `\`${p}\``).join(", ");
    const named = claimed === undefined ? "names no server" : `names server \`${claimed.slice(0, 100)}\``;
    super(`agent \`${caller}\` may decide only for the servers ${allowed}; the request ${named}`);
    this.name = "ServerNotAllowedError";
  }
}

/** The servers each named agent may decide for (`serve.agent_servers`), compiled. */
export type ServerScopes = ReadonlyMap<
  string,
  { readonly patterns: readonly string[]; readonly test: (server: string) => boolean }
>;

/**
 * Checks the `server` a request names against its caller's servers (`serve.agent_servers`): nothing for a
 * caller without a scope; a {@link ServerNotAllowedError} for a server outside it, or for no server at all.
 */
export function checkServerScope(scopes: ServerScopes | undefined, caller: string | undefined, server: unknown): void {
  const scope = caller === undefined ? undefined : scopes?.get(caller);
  if (scope === undefined || caller === undefined) return;
  const named = typeof server === "string" && server !== "" ? server : undefined;
  if (named === undefined || !scope.test(named)) throw new ServerNotAllowedError(caller, scope.patterns, named);
}

/**
 * Thrown (400 `invalid_query`) when a caller whose token names no agent names a session with a `/`: sessions
 * `NAME/…` are those of the agent a token names, and only that token may use them.
 */
export class SessionNamespaceError extends HttpError {
  constructor() {
    super(
      400,
      "invalid_query",
      "querystring/session: a session with `/` is a named agent's (`NAME/…`, its token's own); with this token " +
        "name a session without `/`",
    );
    this.name = "SessionNamespaceError";
  }
}

/**
 * The agent a request is recorded under: the caller's when its token names one (the body may repeat it, not
 * name another: {@link AgentMismatchError}), else whatever the body says, unless that is an agent with a token
 * of its own (`namedAgents`, the names of `serve.agent_tokens`): only its token speaks for it.
 */
export function agentFor(
  claimed: unknown,
  caller: string | undefined,
  namedAgents?: ReadonlySet<string>,
): string | undefined {
  const named = typeof claimed === "string" && claimed !== "" ? claimed : undefined;
  if (caller === undefined) {
    if (named !== undefined && namedAgents?.has(named) === true) throw new AgentMismatchError(undefined, named);
    return named;
  }
  if (named !== undefined && named !== caller) throw new AgentMismatchError(caller, named);
  return caller;
}

/**
 * What a caller is told when the audit chain cannot record: the cause (a file path in the home, the
 * database's address, a driver's message) is for the service log, not for an agent.
 */
export const AUDIT_UNAVAILABLE_MESSAGE =
  "the audit trail could not record the decision, so none is given (the cause is in the service log); try again later";

/**
 * Thrown when the audit chain cannot record a decision: nothing is allowed unrecorded. Its message names
 * the cause, for the log; callers are told {@link AUDIT_UNAVAILABLE_MESSAGE}.
 */
export class AuditUnavailableError extends Error {
  /**
   * True when the store makes the chain writable again by itself (PostgreSQL: retried every 500 ms once the
   * database answers): the 503 then says `Retry-After: 1`. False on the audit.jsonl file (a restart).
   */
  readonly recovers: boolean;
  constructor(cause: unknown, recovers = false) {
    super(`the audit trail could not record the decision: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = "AuditUnavailableError";
    this.recovers = recovers;
  }
}

/**
 * The mutable heart of one session: its state, intent, plans, history, provenance, tokens and event log, and
 * the three things every operation does — read the injected clock, record an event, and throw a typed error
 * that is itself recorded. Internal: callers use the {@link Session} facade.
 */
import type { Issue } from "../issues/index.js";
import type { SessionCode } from "./codes.js";
import type { ConfirmationDesk } from "./confirmations.js";
import { SessionError } from "./errors.js";
import type { ActionRequest } from "../request/index.js";
import type { CompiledSessionSettings, ExecutedCall, SessionJudgment, SessionView } from "./evaluate-session.js";
import type { SessionEvent, SessionEventType } from "./events.js";
import type { CompiledIntent } from "./intent.js";
import type { CompiledPlan } from "./plan.js";
import type { ProvenanceEntry } from "./provenance.js";
import type { ProvenanceMemory } from "./provenance-memory.js";
import type { SharedStoreBudget } from "./store-budget.js";
import { nextSessionState, type SessionOperation, type SessionState } from "./state-machine.js";
import { TokenRegistry } from "./token-registry.js";

/** What the core needs from outside: identity, clock, randomness, key, hook. */

/**
 * How many of a session's events it keeps in memory (`session.events`): between this and twice this, the
 * most recent. Every event still goes to `onEvent` (the audit) as it happens, and `seq` keeps counting.
 */
export const MAX_KEPT_EVENTS = 10_000;

/**
 * How many executed calls a session keeps in memory (`session.history`): between this and twice this, the
 * most recent. What the judgment reads of them (budgets, transition rules, the kill switch) is counted as
 * calls are recorded ({@link SessionCounts}), so neither memory nor a decision's work grows with the session.
 */
export const MAX_KEPT_HISTORY = 10_000;

/** What a session counted of its executed calls, kept as calls are recorded (changed in place). */
export interface SessionCounts {
  /** Per intent version: calls, consequential calls, and calls of each per-action cap (`intent.perAction` order). */
  readonly budgets: Map<number, { total: number; consequential: number; readonly perAction: number[] }>;
  /** Per transition rule (`settings.transitions` order): the first executed call's name matching its `from`. */
  readonly transitionAfter: (string | undefined)[];
  /** Times of the consequential calls since the last resume that are still inside the kill switch's window. */
  consequentialAt: number[];
  /** Times of every call since the last resume still inside the window (only with the kill switch's `calls`). */
  callsAt: number[];
}

/** What the session noted about an executed call for the result still to come. */
export interface PendingFetch {
  /** The executed call (what `recordExecution` returned; `recordToolResult`'s `call` names its `seq`). */
  readonly call: ExecutedCall;
  readonly named: boolean;
  readonly echoes: ReadonlySet<string>;
}

export interface SessionCoreDeps {
  readonly tenant: string;
  readonly id: string;
  readonly now: () => Date;
  readonly random: (size: number) => Uint8Array;
  readonly authorityKey: Uint8Array;
  readonly onEvent: ((event: SessionEvent) => void) | undefined;
  /** Room for provenance text shared with other sessions of the process, when there is such a limit. */
  readonly storeBudget: SharedStoreBudget | undefined;
  /** What earlier sessions read in untrusted content, when the front end keeps it. */
  readonly memory: ProvenanceMemory | undefined;
}

/**
 * What the judgment read: every field of the view, and the length of each array field. Two equal stamps mean
 * `judgeRequest` reads the same session: the view's fields are immutable values, objects replaced (never
 * changed in place) when they change, or arrays that only grow (see {@link SessionCore.view}).
 */
type ViewStamp = readonly unknown[];

function stampOf(view: SessionView): ViewStamp {
  const stamp: unknown[] = [];
  for (const value of Object.values(view)) {
    stamp.push(value);
    if (Array.isArray(value)) stamp.push(value.length);
  }
  return stamp;
}

function sameStamp(a: ViewStamp, b: ViewStamp): boolean {
  return a.length === b.length && a.every((value, i) => Object.is(value, b[i]));
}

/** The request as JSON (its content when judged; the caller may change the object later), or undefined. */
function requestKey(request: ActionRequest): string | undefined {
  try {
    return JSON.stringify(request);
  } catch {
    return undefined;
  }
}

/** A judgment the session gave: the request it judged (as JSON), what it read, and the judgment. */
interface RememberedJudgment {
  readonly key: string;
  readonly stamp: ViewStamp;
  readonly judgment: SessionJudgment;
}

/** Most judgments remembered (calls of one session decided but not yet recorded). */
const MAX_REMEMBERED = 16;

/** One session's state. Fields are public to the session's own modules only (not exported from the package). */
export class SessionCore {
  state: SessionState = "created";
  intent: CompiledIntent | null = null;
  /** A submitted plan awaiting approval. */
  proposedPlan: CompiledPlan | null = null;
  /** The approved plan in force. */
  plan: CompiledPlan | null = null;
  /** The most recent executed calls ({@link MAX_KEPT_HISTORY} at least). */
  readonly history: ExecutedCall[] = [];
  /** Calls executed so far (the next call's `seq` is this plus one). */
  executed = 0;
  /** What the judgment reads of the executed calls (see {@link SessionCounts}); changes with {@link executed}. */
  readonly counts: SessionCounts = {
    budgets: new Map(),
    transitionAfter: [],
    consequentialAt: [],
    callsAt: [],
  };
  entries: ProvenanceEntry[] = [];
  storeChars = 0;
  provenanceIncomplete = false;
  readonly instructionSources: string[] = [];
  /** The most recent events ({@link MAX_KEPT_EVENTS} at least); `onEvent` sees every one. */
  readonly events: SessionEvent[] = [];
  /** Events emitted so far (the next event's `seq` is this plus one). */
  eventCount = 0;
  readonly tokens = new TokenRegistry();
  /** How many times the session was suspended (binds a resume confirmation to one suspension). */
  suspensions = 0;
  toolResults = 0;
  /**
   * Per `server.tool`, for each executed call whose result is still to come: whether the user named what it
   * fetched (an argument the user typed, such as a URL or a file name; read by `provenance.named_sources`),
   * and, for a trusted server, the pieces of its arguments no trusted source held (what its answer may echo
   * but cannot vouch for).
   */
  readonly pendingFetches = new Map<string, PendingFetch[]>();
  userInputs = 0;
  /**
   * Calls `authorize` let through (counted then) whose `recordExecution` has not come yet, by action and
   * arguments' hash: the note each one's result will be recorded with. {@link authorizedUnrecorded} counts them.
   */
  readonly #authorized = new Map<string, PendingFetch[]>();
  /** The key each waiting authorized call's note is kept under. */
  readonly #authorizedKeys = new WeakMap<PendingFetch, string>();
  authorizedUnrecorded = 0;
  /** The `user_input` entries among `entries`, kept as entries grow ({@link userEntries}). */
  #users: { of: readonly ProvenanceEntry[]; scanned: number; list: ProvenanceEntry[] } = {
    of: [],
    scanned: 0,
    list: [],
  };
  /** The judgments of the decisions since the session last changed (see {@link remember}). */
  #remembered: RememberedJudgment[] = [];
  readonly deps: SessionCoreDeps;
  readonly settings: CompiledSessionSettings;
  readonly desk: ConfirmationDesk;
  /** The memory's recall, bound once (the view's stamp compares it); undefined without one or when it is off. */
  readonly recallEarlier: ((identity: string) => string | undefined) | undefined;

  constructor(deps: SessionCoreDeps, settings: CompiledSessionSettings, desk: ConfirmationDesk) {
    this.deps = deps;
    this.settings = settings;
    this.desk = desk;
    const memory = deps.memory === undefined ? undefined : this.memory;
    this.recallEarlier = memory === undefined ? undefined : (identity) => memory.recall(identity);
  }

  /** The front end's memory of earlier sessions, unless `provenance.remember_hours` is 0. */
  get memory(): ProvenanceMemory | undefined {
    if (this.deps.memory === undefined) return undefined;
    return this.settings.settings.provenance.remember_hours > 0 ? this.deps.memory : undefined;
  }

  /** Keeps the note of a call `authorize` let through under `key`, until its `recordExecution` takes it. */
  waitAuthorized(key: string, note: PendingFetch): void {
    const waiting = this.#authorized.get(key) ?? [];
    waiting.push(note);
    this.#authorized.set(key, waiting);
    this.#authorizedKeys.set(note, key);
    this.authorizedUnrecorded++;
  }

  /** The oldest waiting authorized call's note under `key`, taken out; undefined when none waits. */
  takeAuthorized(key: string): PendingFetch | undefined {
    const note = this.#authorized.get(key)?.[0];
    if (note !== undefined) this.forgetAuthorized(note);
    return note;
  }

  /** A note no longer waits for its record (taken, or its result was recorded apart). */
  forgetAuthorized(note: PendingFetch): void {
    const key = this.#authorizedKeys.get(note);
    if (key === undefined) return;
    this.#authorizedKeys.delete(note);
    const waiting = this.#authorized.get(key) ?? [];
    const at = waiting.indexOf(note);
    if (at >= 0) waiting.splice(at, 1);
    if (waiting.length === 0) this.#authorized.delete(key);
    this.authorizedUnrecorded--;
  }

  /**
   * Takes the note of the executed call whose result is recorded: the call `seq` names when given (a note that
   * is gone vouches for nothing the call was asked), else the oldest of that tool still waiting for one.
   */
  takeNote(tool: string, seq: number | undefined): PendingFetch | undefined {
    const queue = this.pendingFetches.get(tool);
    const at =
      seq === undefined
        ? queue === undefined || queue.length === 0
          ? -1
          : 0
        : (queue?.findIndex((n) => n.call.seq === seq) ?? -1);
    const note = at < 0 ? undefined : queue?.splice(at, 1)[0];
    if (note !== undefined) this.forgetAuthorized(note);
    return note;
  }

  /** The injected clock, checked. */
  now(): Date {
    const now = this.deps.now();
    if (!(now instanceof Date) || Number.isNaN(now.getTime())) {
      throw new SessionError("invalid_session_config", "the session clock gave an invalid time");
    }
    return now;
  }

  /** A random id: `bytes` random bytes as lowercase hex. */
  randomId(bytes = 16): string {
    const raw = this.deps.random(bytes);
    if (!(raw instanceof Uint8Array) || raw.length !== bytes) {
      throw new SessionError("invalid_session_config", `the random source did not give ${bytes} bytes`);
    }
    return Buffer.from(raw).toString("hex");
  }

  /** Appends an event and hands it to the hook; a throwing hook is an error (the event stays in the log). */
  emit(type: SessionEventType, message: string, code?: SessionCode): SessionEvent {
    const base = {
      seq: this.eventCount + 1,
      at: this.now().toISOString(),
      tenant: this.deps.tenant,
      session: this.deps.id,
      type,
      state: this.state,
      intent_version: this.intent?.intent.version ?? null,
      plan_hash: this.plan?.hash ?? null,
      message,
    };
    const event: SessionEvent = Object.freeze(code === undefined ? base : { ...base, code });
    this.eventCount++;
    this.events.push(event);
    // a long-lived session keeps the recent events, not all of them (dropped in chunks: amortized O(1))
    if (this.events.length >= 2 * MAX_KEPT_EVENTS) this.events.splice(0, this.events.length - MAX_KEPT_EVENTS);
    if (this.deps.onEvent !== undefined) {
      try {
        this.deps.onEvent(event);
      } catch (err) {
        const why = err instanceof Error ? err.message : String(err);
        throw new SessionError("event_sink_failed", `the session event hook failed: ${why}`);
      }
    }
    return event;
  }

  /** Records the failure and throws it. */
  fail(code: SessionCode, message: string, issues: readonly Issue[] = [], type: SessionEventType = "error"): never {
    this.emit(type, message, code);
    throw new SessionError(code, message, issues);
  }

  /** The state `operation` leads to; an illegal transition is recorded and thrown. */
  target(operation: SessionOperation): SessionState {
    const to = nextSessionState(this.state, operation);
    if (to === undefined) {
      this.fail(
        "illegal_transition",
        `cannot ${operation.replace(/_/g, " ")} in state \`${this.state}\``,
        [],
        "illegal_transition",
      );
    }
    return to;
  }

  /** Moves to `to`, recording the change. */
  moveTo(to: SessionState, why: string): void {
    const from = this.state;
    this.state = to;
    this.emit("state_changed", `${from} -> ${to}: ${why}`);
  }

  /** Revokes every unused token, recording how many. */
  revokeTokens(why: string): void {
    const count = this.tokens.revokeAll();
    this.emit("tokens_revoked", `${count} authority token${count === 1 ? "" : "s"} revoked: ${why}`);
  }

  /**
   * Remembers the judgment a decision gave `request`, so that recording the call as executed, with nothing
   * in the session changed in between, does not judge the same request again ({@link recall}).
   */
  remember(request: ActionRequest, judgment: SessionJudgment): void {
    const key = requestKey(request);
    if (key === undefined) return;
    const stamp = stampOf(this.view());
    const kept = this.#remembered.filter((r) => sameStamp(r.stamp, stamp) && r.key !== key);
    kept.push({ key, stamp, judgment });
    this.#remembered = kept.slice(-MAX_REMEMBERED);
  }

  /**
   * The judgment remembered for a request with the same content, given while the session read exactly what it
   * reads now; undefined otherwise (judge it). `judgeRequest` is a pure function of the view and the request,
   * so the remembered judgment is the one judging again would give.
   */
  recall(request: ActionRequest): SessionJudgment | undefined {
    if (this.#remembered.length === 0) return undefined;
    const stamp = stampOf(this.view());
    this.#remembered = this.#remembered.filter((r) => sameStamp(r.stamp, stamp));
    if (this.#remembered.length === 0) return undefined;
    const key = requestKey(request);
    return key === undefined ? undefined : this.#remembered.find((r) => r.key === key)?.judgment;
  }

  /**
   * The `user_input` entries, in order: `entries.filter((e) => e.label === "user_input")`, read only from the
   * entries added since the last call (entries only grow, or are replaced by a new array).
   */
  userEntries(): readonly ProvenanceEntry[] {
    let users = this.#users;
    if (users.of !== this.entries || users.scanned > this.entries.length) {
      users = { of: this.entries, scanned: 0, list: [] };
      this.#users = users;
    }
    for (; users.scanned < this.entries.length; users.scanned++) {
      const entry = this.entries[users.scanned] as ProvenanceEntry;
      if (entry.label === "user_input") users.list.push(entry);
    }
    return users.list;
  }

  /**
   * What the judgment reads. Every field is an immutable value, an object replaced (never changed in place)
   * when it changes, or an array that only grows: the remembered judgments rely on it ({@link recall}).
   */
  view(): SessionView {
    return {
      state: this.state,
      intent: this.intent,
      plan: this.plan,
      settings: this.settings,
      executed: this.executed,
      counts: this.counts,
      entries: this.entries,
      provenanceIncomplete: this.provenanceIncomplete,
      instructionSources: this.instructionSources,
      recall: this.recallEarlier,
    };
  }
}

/** What {@link RequestCarriers} tells of the requests it carries. */
export interface CarrierHooks {
  /** Fails request `id` at once; false when it is not in flight. */
  readonly fail: (id: string, why: string) => boolean | void;
  readonly failAll: (why: string) => void;
  readonly say: (what: string) => void;
}

/** Most event ids of streams whose call is over kept, to refuse their resumption. */
const MAX_OVER = 1024;

/**
 * The HTTP requests carrying the relay's JSON-RPC requests, by their id: once the relay no longer waits for
 * an answer (it came, the call timed out or was cancelled), `end(id)` ends the request's answer. Without
 * it an upstream that keeps the answer's event stream open (sending nothing, or notifications for ever)
 * after the call gave up on it would keep a connection, and the proxy reading it, for as long as it likes.
 *
 * An answer stream that carried event ids is resumed by the SDK when it ends without the answer (a GET with
 * `Last-Event-ID`): `resumable` notes which call the last id belongs to, so that the GET is carried as that
 * call's (ended with it, failed at once when the server refuses it); once the call is over, a GET resuming
 * one of its streams is refused without asking the server (`over`), or the SDK would open the stream again
 * each time it ended, for a call nobody waits for.
 */
export class RequestCarriers {
  readonly #byId = new Map<string, { readonly end: () => void; readonly lastEventId: () => string | undefined }>();
  /** Event ids a stream ended at without its call's answer → the call (undefined: more than one call's). */
  readonly #resumable = new Map<string, string | undefined>();
  /** Event ids of streams whose call is over, oldest first. */
  readonly #over = new Set<string>();
  #hooks: CarrierHooks | undefined;
  constructor(readonly idPattern: RegExp) {}

  /** Where the failures of carried requests (`fail`) and the answers dropped from them (`say`) go. */
  listen(hooks: CarrierHooks): void {
    this.#hooks = hooks;
  }

  /** Fails the request `id` at once: its answer can no longer come (`why` says what came instead). */
  fail(id: string, why: string): void {
    this.#hooks?.fail(id, why);
  }

  /** Fails the request `id` at once if it is in flight: whether it was. */
  failIfWaiting(id: string, why: string): boolean {
    return this.#hooks?.fail(id, why) === true;
  }

  /**
   * The one id `idPattern` takes that a text names as a JSON-RPC id (`"id":"acp-relay-7"`), or undefined
   * when it names none, or more than one.
   */
  namedIn(text: string): string | undefined {
    const found = new Set<string>();
    for (const match of text.matchAll(/"id"\s*:\s*"([^"\\]{1,64})"/g)) {
      const id = match[1];
      if (id !== undefined && this.idPattern.test(id)) found.add(id);
      if (found.size > 1) return undefined;
    }
    return found.size === 1 ? [...found][0] : undefined;
  }

  /** Fails every request in flight at once: the stream carrying their answers is gone (`why`). */
  failAll(why: string): void {
    this.#hooks?.failAll(why);
  }

  /** Says what was dropped from an answer. */
  say(what: string): void {
    this.#hooks?.say(what);
  }

  /** The id of the JSON-RPC request in a body (`{"jsonrpc":"2.0","id":"…",…`) that `idPattern` takes. */
  idOf(body: unknown): string | undefined {
    if (typeof body !== "string") return undefined;
    const id = /^\{"jsonrpc":"2\.0","id":"([^"\\]{1,64})"/.exec(body.slice(0, 128))?.[1];
    return id !== undefined && this.idPattern.test(id) ? id : undefined;
  }

  /**
   * The call whose answer stream a GET resuming from `eventId` resumes, taken (a second GET from it is the
   * SDK's retry, not carried); undefined when none, or more than one call's stream ended there.
   */
  resumedBy(eventId: string): string | undefined {
    const id = this.#resumable.get(eventId);
    this.#resumable.delete(eventId);
    return id;
  }

  /** Whether a GET resuming from `eventId` resumes a stream whose call is over (and so is refused). */
  isOver(eventId: string): boolean {
    return this.#over.has(eventId) && !this.#resumable.has(eventId);
  }

  /** The answer stream of call `id` ended at `eventId` without its answer: the SDK will resume it from there. */
  resumable(eventId: string, id: string): void {
    const known = this.#resumable.has(eventId);
    this.#resumable.set(eventId, known && this.#resumable.get(eventId) !== id ? undefined : id);
  }

  /**
   * The request `id`'s answer is open: `end` ends it; `lastEventId` is the id of its last event, if any (its
   * resumption is refused once the call is over).
   */
  carry(id: string, end: () => void, lastEventId: () => string | undefined = () => undefined): void {
    this.#byId.set(id, { end, lastEventId });
  }

  /** The request `id`'s answer ended (its last event id, if any, noted by `resumable`). */
  forget(id: string): void {
    this.#byId.delete(id);
  }

  /** Ends the answer of the request carrying `id`, if one is open: its call is over. */
  end(id: string): void {
    const carried = this.#byId.get(id);
    this.#byId.delete(id);
    const last = carried?.lastEventId();
    if (last !== undefined) this.#isOverAt(last);
    for (const [eventId, call] of this.#resumable) {
      if (call !== id) continue;
      this.#resumable.delete(eventId);
      this.#isOverAt(eventId);
    }
    carried?.end();
  }

  #isOverAt(eventId: string): void {
    this.#over.delete(eventId);
    this.#over.add(eventId);
    if (this.#over.size > MAX_OVER) this.#over.delete(this.#over.values().next().value as string);
  }

  /** HTTP requests with an answer open (tests). */
  get size(): number {
    return this.#byId.size;
  }
}

import { JSONRPCMessageSchema, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/** Watches the body of the answer to one relayed request, as it passes to the SDK's transport. */
export interface AnswerWatch {
  /** The bytes of `chunk` to pass on, and `failure` (what to fail the call with) once the body must end there. */
  push(chunk: Uint8Array): { readonly out: Uint8Array; readonly failure?: string };
  /** The body ended: bytes still to pass on, and `failure` when it left the call without an answer. */
  end(): { readonly out: Uint8Array; readonly failure?: string };
  /**
   * The body failed with `why` (`tooLarge`: it went over the size of one message): what to fail the call
   * with, or undefined to let the failure through to the SDK (which ends or resumes the call itself).
   */
  broke(why: string, tooLarge: boolean): string | undefined;
}

/** The failure of a call whose answer ended without answering it. */
export const UNANSWERED = "the server ended this call's answer without answering it";

const CONNECTION_STREAM = "the server's event stream (HTTP+SSE), which carries every answer,";
/** The failure of every call in flight when the event stream of an HTTP+SSE connection ends. */
export const CONNECTION_ENDED = `${CONNECTION_STREAM} ended`;

/**
 * What one call's answer stream (the event stream a streamable HTTP upstream answers a relayed `tools/call`
 * POST with) passes on, read as the SDK's transport reads it (the same event framing, the same JSON-RPC
 * schema), so that a call ends as soon as its stream can no longer answer it rather than at its timeout:
 *
 * - an event the SDK would drop as not JSON-RPC (it reports it with no call named, and the call waits for
 *   its timeout) ends the stream and is `failure`, which names the event;
 * - a JSON-RPC batch (an array of messages) is passed on as one event per message, as the SDK takes a
 *   batch in a JSON answer; an empty batch, or one holding anything else, is not JSON-RPC;
 * - an answer to any other id is dropped and said (`say`): this stream answers its own call only, and must
 *   not settle another caller's; an error without an id (the server could not read the request) is its
 *   call's error;
 * - `ended` says whether the stream ended without answering its call and cannot be resumed (no event
 *   carried an id the SDK would resume from).
 *
 * Events of other types, events without data, comments and `retry` lines pass as they came.
 */
export class AnswerStreamGuard implements AnswerWatch {
  /** The call's answer has been passed on. */
  answered = false;
  /** An event carried an id: the SDK resumes the stream from it (GET with `Last-Event-ID`) when it ends. */
  resumable = false;
  /** The id of the last event that carried one (the SDK resumes from it). */
  lastEventId: string | undefined;
  readonly #id: string | undefined;
  readonly #say: (message: string) => void;
  readonly #decoder = new TextDecoder();
  readonly #encoder = new TextEncoder();
  /** The text of the line not ended yet. */
  #line = "";
  #afterCr = false;
  /** The text of the event so far: its lines with their ends, as they came. */
  #raw = "";
  #data: string[] = [];
  #type: string | undefined;
  #eventId: string | undefined;
  #out = "";
  #failure: string | undefined;
  readonly #named: ((data: string, what: string) => boolean) | undefined;

  /**
   * @param id - the JSON-RPC id of the request the stream answers; undefined for the one event stream of an
   *   HTTP+SSE connection, which carries every answer: its events pass (batches taken apart, the others as
   *   they came), and its end, its failure, or an event on it that is no JSON-RPC and names no call in flight
   *   (see `named`) ends it and is the failure of every call in flight
   * @param say - told of each answer dropped (another id's)
   * @param named - on the connection's stream (no `id`), told of an event that is not JSON-RPC with what to
   *   say of it: true when it named a call in flight and that call was failed (the event is then dropped, and
   *   the stream goes on); false ends the stream there
   */
  constructor(id: string | undefined, say: (message: string) => void, named?: (data: string, what: string) => boolean) {
    this.#id = id;
    this.#say = say;
    this.#named = named;
  }

  /**
   * The bytes of `chunk` to pass on (whole events only; the rest waits for its end), and `failure` once an
   * event was no JSON-RPC: the stream ends there (nothing after it is passed on).
   */
  push(chunk: Uint8Array): { readonly out: Uint8Array; readonly failure?: string } {
    if (this.#failure !== undefined) return { out: new Uint8Array(0), failure: this.#failure };
    let text = this.#decoder.decode(chunk, { stream: true });
    if (text === "") return { out: new Uint8Array(0) };
    if (this.#afterCr && text.startsWith("\n")) {
      this.#raw += "\n";
      text = text.slice(1);
    }
    this.#afterCr = false;
    let start = 0;
    while (start < text.length && this.#failure === undefined) {
      const lf = text.indexOf("\n", start);
      const cr = text.indexOf("\r", start);
      const end = cr === -1 ? lf : lf === -1 ? cr : Math.min(cr, lf);
      if (end === -1) break;
      let next = end + 1;
      if (text.charCodeAt(end) === CR) {
        if (next === text.length) this.#afterCr = true;
        else if (text.charCodeAt(next) === LF) next += 1;
      }
      const line = this.#line + text.slice(start, end);
      this.#line = "";
      this.#raw += line + text.slice(end, next);
      this.#lineOf(line);
      start = next;
    }
    if (this.#failure === undefined) this.#line += text.slice(start);
    const out = this.#encoder.encode(this.#out);
    this.#out = "";
    return this.#failure === undefined ? { out } : { out, failure: this.#failure };
  }

  end(): { readonly out: Uint8Array; readonly failure?: string } {
    // an event not ended by a blank line is not dispatched (nor by the SDK)
    const out = new Uint8Array(0);
    if (this.#id === undefined) return { out, failure: CONNECTION_ENDED };
    return !this.answered && !this.resumable && this.#failure === undefined ? { out, failure: UNANSWERED } : { out };
  }

  broke(why: string, tooLarge: boolean): string | undefined {
    if (this.#id === undefined) return `${CONNECTION_STREAM} failed: ${why}`;
    if (this.answered || this.#failure !== undefined || (this.resumable && !tooLarge)) return undefined;
    return `its answer stream failed: ${why}`;
  }

  #lineOf(line: string): void {
    if (line === "") return this.#dispatch();
    if (line.startsWith(":")) return;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") this.#data.push(value);
    else if (field === "event") this.#type = value === "" ? undefined : value;
    else if (field === "id" && !value.includes("\0")) this.#eventId = value;
  }

  #dispatch(): void {
    const raw = this.#raw;
    const lines = this.#data;
    const type = this.#type;
    const eventId = this.#eventId;
    this.#raw = "";
    this.#data = [];
    this.#type = undefined;
    this.#eventId = undefined;
    // as eventsource-parser: an event without a data line is not dispatched
    if (lines.length === 0) return void (this.#out += raw);
    if (eventId !== undefined && eventId !== "") {
      this.resumable = true;
      this.lastEventId = eventId;
    }
    const data = lines.join("\n");
    // as the SDK: an event without data, or of another type than `message`, is skipped
    if (data === "" || (type !== undefined && type !== "message")) return void (this.#out += raw);
    const read = messagesOf(data);
    if (read === undefined || read.messages.length === 0) {
      const what = `an event that is not a JSON-RPC message (\`${excerpt(data)}\`)`;
      if (this.#id === undefined) {
        // on the connection's stream an event naming one call in flight is that call's broken answer (it fails,
        // the stream goes on); naming none, the stream that carries every answer is broken (the SDK would
        // report the event and read on, every call waiting for its timeout): it ends here, and every call in
        // flight fails
        if (this.#named?.(data, what) === true) return;
        this.#failure = `${CONNECTION_STREAM} broke: it carried ${what}`;
        return;
      }
      // after the call's answer nothing is left to fail: the stream ends as the call settles
      if (this.answered) return this.#say(`dropped ${what} after the answer to \`${this.#id}\``);
      this.#failure = `its answer stream carried ${what}`;
      return;
    }
    const kept = read.messages.map((m) => this.own(m)).filter((m) => m !== undefined);
    if (!read.batch && kept.length === 1 && kept[0] === read.messages[0]) {
      this.#out += raw;
      return;
    }
    kept.forEach((message, i) => {
      const id = i === kept.length - 1 && eventId !== undefined && eventId !== "" ? `id: ${eventId}\n` : "";
      this.#out += `event: message\n${id}data: ${JSON.stringify(message)}\n\n`;
    });
  }

  /** `message` if it is this answer's to pass on (its id given to an id-less error), else undefined (said). */
  own(message: JSONRPCMessage): JSONRPCMessage | undefined {
    if (this.#id === undefined) return message;
    if (!("result" in message) && !("error" in message)) return message;
    if ("error" in message && message.id === undefined) {
      this.answered = true;
      return { ...message, id: this.#id };
    }
    if (message.id === this.#id) {
      this.answered = true;
      return message;
    }
    this.#say(
      `dropped an answer to ${JSON.stringify(excerpt(String(message.id)))} on the answer stream of \`${this.#id}\``,
    );
    return undefined;
  }
}

/**
 * The JSON answer (`application/json`) of one relayed request, read whole (the SDK reads it whole too):
 * answers to other ids are taken out of it (said), and an answer without one to its request is `failure`.
 * A body that is no JSON-RPC passes as it came: the SDK fails the request's send with it, at once.
 */
export class JsonAnswerWatch implements AnswerWatch {
  readonly #chunks: Uint8Array[] = [];
  readonly #guard: AnswerStreamGuard;

  constructor(id: string, say: (message: string) => void) {
    this.#guard = new AnswerStreamGuard(id, say);
  }

  push(chunk: Uint8Array): { readonly out: Uint8Array } {
    this.#chunks.push(chunk);
    return { out: new Uint8Array(0) };
  }

  end(): { readonly out: Uint8Array; readonly failure?: string } {
    const body = Buffer.concat(this.#chunks);
    this.#chunks.length = 0;
    const read = messagesOf(new TextDecoder().decode(body));
    if (read === undefined) return { out: body };
    const kept = read.messages.map((m) => this.#guard.own(m)).filter((m) => m !== undefined);
    const same = kept.length === read.messages.length && kept.every((m, i) => m === read.messages[i]);
    const out = same ? body : new TextEncoder().encode(JSON.stringify(read.batch ? kept : (kept[0] ?? [])));
    return this.#guard.answered ? { out } : { out, failure: UNANSWERED };
  }

  broke(): undefined {
    return undefined;
  }
}

/** The JSON-RPC message(s) of a JSON text (a batch, maybe empty: each of its messages), or undefined. */
function messagesOf(data: string): { readonly messages: JSONRPCMessage[]; readonly batch: boolean } | undefined {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    return undefined;
  }
  const items = Array.isArray(value) ? (value as unknown[]) : [value];
  const messages: JSONRPCMessage[] = [];
  for (const item of items) {
    const parsed = JSONRPCMessageSchema.safeParse(item);
    if (!parsed.success) return undefined;
    messages.push(parsed.data);
  }
  return { messages, batch: Array.isArray(value) };
}

/** The first 80 characters of `text`, one line, without backticks: for a message. */
export function excerpt(text: string): string {
  const cut = text.length > 80 ? `${text.slice(0, 80)}…` : text;
  return cut.replace(/[\p{Cc}`]/gu, " ");
}

const LF = 0x0a;
const CR = 0x0d;

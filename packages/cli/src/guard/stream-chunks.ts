import { Buffer } from "node:buffer";
import { createRedactor, NO_PATTERNS } from "@acp/core";
import {
  asUtf8Bytes,
  byteSized,
  bytesOf,
  copyOfBytes,
  isShared,
  ownKeys,
  resultChecker,
  sameKindBytes,
  type Bytes,
} from "./result-secrets.js";
import { pieceRedactors, type PieceRedactor } from "./stream-text.js";

/**
 * How much may wait at once to see whether it ends in the start of a secret (the text of the chunks held
 * back); past it the stream is stopped (`result_withheld`) rather than kept in memory without end.
 */
export const MAX_HELD_TEXT = 4 * 1024 * 1024;

/** What a push or the end lets through: the chunks that may be passed on now, in order, or why the stream stops. */
export type ChunkStep =
  { readonly kind: "shown"; readonly chunks: readonly unknown[] } | { readonly kind: "withheld"; readonly why: string };

/**
 * The chunks of a stream, each checked as a result is (`checkResultSecrets`), with every secret
 * value replaced, also one split between chunks: the strings (and byte runs) at the same place in
 * successive chunks are pieces of one text, redacted as a stream of text pieces is
 * ({@link pieceRedactors}). A chunk whose string at some place ends in what could be the start of a secret
 * is held back, and the chunks after it wait behind it (the order is kept), until a later chunk has a
 * string at that place that shows whether it is, or the stream ends. A chunk is passed on whole (an
 * object as the copy made as it was checked: the function may change what it yielded), its shape kept, with what it held of a secret replaced (`[REDACTED]` where the secret starts, nothing where
 * it runs on). A top-level string chunk left empty so is not passed on.
 */
export interface ChunkStreamRedactor {
  push(chunk: unknown): ChunkStep;
  end(): ChunkStep;
  /** How many chunks are held back now. */
  readonly holding: number;
}

/**
 * Where a string sits in a chunk, as the place successive chunks have a text at: keys of plain objects,
 * a `Map`'s primitive keys and the positions of an array's objects; the strings (and byte runs) of one
 * array, and the items of a `Set`, are pieces of one text at the array's or set's place, in order.
 */
type Segment = readonly (string | number)[];

interface Leaf {
  readonly key: string;
  readonly path: readonly Segment[];
  readonly text: string;
}

/** Thrown inside the walk: a chunk that cannot be passed on with its secret replaced. */
class Unreplaceable extends Error {}

const isPrimitive = (value: unknown): boolean =>
  value === null || (typeof value !== "object" && typeof value !== "function");

const isBytes = (value: object): value is Bytes =>
  value instanceof ArrayBuffer || ArrayBuffer.isView(value) || isShared(value);

const CANONICAL_INDEX = /^(?:0|[1-9][0-9]*)$/;

interface Walk {
  /** Copy (put each leaf's answer back) or only collect the leaves. */
  readonly copy: boolean;
  /** Copy bytes too when their answer is what they hold (a snapshot shares no memory with the chunk). */
  readonly fresh?: boolean;
  readonly memo: Map<object, unknown>;
  readonly leaves: Leaf[];
  readonly answers: readonly string[];
  at: number;
}

function leafKey(kind: "t" | "b", path: readonly Segment[]): string {
  return `${kind}${JSON.stringify(path)}`;
}

/** A segment for an item of an array: its place, or the array's own for a string or bytes (pieces of one text). */
function arraySegment(key: string | symbol, item: unknown): Segment {
  if (typeof key === "symbol") return ["y", String(key)];
  if (!CANONICAL_INDEX.test(key)) return ["k", key];
  const leaf = typeof item === "string" || (typeof item === "object" && item !== null && isBytes(item));
  return leaf ? ["*"] : ["i", Number(key)];
}

/**
 * Walks a chunk the check let through (arrays, plain objects, `Map`, `Set`, `Date`, bytes, primitives) in
 * one fixed order: collects its leaves, or (`copy`) returns a copy with each leaf replaced by its answer,
 * shared and cyclic references kept.
 */
function walk(value: unknown, path: readonly Segment[], w: Walk): unknown {
  if (typeof value === "string") {
    if (!w.copy) {
      w.leaves.push({ key: leafKey("t", path), path, text: value });
      return value;
    }
    return w.answers[w.at++];
  }
  if (value === null || typeof value !== "object") return value;
  const done = w.memo.get(value);
  if (done !== undefined) return done;
  if (isBytes(value)) {
    const text = bytesOf(value).toString("latin1");
    if (!w.copy) {
      w.leaves.push({ key: leafKey("b", path), path, text });
      w.memo.set(value, value);
      return value;
    }
    const answer = w.answers[w.at++] as string;
    const out = answer !== text ? replacedBytes(value, answer) : w.fresh === true ? copyOfBytes(value) : value;
    w.memo.set(value, out);
    return out;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto === Date.prototype) {
    w.memo.set(value, value);
    return value;
  }
  if (proto === Map.prototype) {
    const out = w.copy ? new Map<unknown, unknown>() : value;
    w.memo.set(value, out);
    for (const [key, item] of value as Map<unknown, unknown>) {
      const place: Segment = isPrimitive(key) ? ["m", typeof key, String(key)] : ["mv"];
      const k = isPrimitive(key) ? key : walk(key, [...path, ["mk"]], w);
      const v = walk(item, [...path, place], w);
      if (w.copy) (out as Map<unknown, unknown>).set(k, v);
    }
    return out;
  }
  if (proto === Set.prototype) {
    const out = w.copy ? new Set<unknown>() : value;
    w.memo.set(value, out);
    for (const item of value as Set<unknown>) {
      const v = walk(item, [...path, ["set"]], w);
      if (w.copy) (out as Set<unknown>).add(v);
    }
    return out;
  }
  if (!Array.isArray(value) && proto !== Object.prototype && proto !== null) {
    throw new Unreplaceable("it holds an object whose inside cannot be checked"); // the check withholds these first
  }
  const out: object = !w.copy
    ? value
    : Array.isArray(value)
      ? new Array<unknown>(value.length)
      : (Object.create(proto as object | null) as object);
  w.memo.set(value, out);
  for (const key of ownKeys(value)) {
    const property = Object.getOwnPropertyDescriptor(value, key) as PropertyDescriptor;
    const place: Segment = Array.isArray(value)
      ? arraySegment(key, property.value)
      : typeof key === "symbol"
        ? ["y", String(key)]
        : ["k", key];
    const v = walk(property.value, [...path, place], w);
    if (w.copy) Object.defineProperty(out, key, { ...property, value: v });
  }
  return out;
}

function replacedBytes(value: Bytes, answer: string): unknown {
  if (!byteSized(value)) {
    const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
    throw new Unreplaceable(
      `it holds a \`${typeof name === "string" ? name : "binary value"}\` with a secret value whose bytes cannot be replaced`,
    );
  }
  return sameKindBytes(value, Buffer.from(answer, "latin1"));
}

type Finished =
  | { readonly kind: "shown"; readonly value: unknown; readonly drop: boolean }
  | { readonly kind: "withheld"; readonly why: string };

/** One chunk waiting for the answers for its leaves. */
interface Pending {
  /** The chunk as it came; once held back, a snapshot of it (the function may change what it yielded). */
  chunk: unknown;
  /** The chunk as the check passed it on (the same, or a copy with its key names' secrets replaced). */
  checked: unknown;
  /** Whether `chunk` is a snapshot. */
  taken: boolean;
  readonly leaves: readonly Leaf[];
  readonly answers: string[];
  waiting: number;
  readonly size: number;
}

/** The text at one place: its redactor, and the leaves it holds, oldest first. */
interface Place {
  readonly redactor: PieceRedactor;
  readonly slots: { readonly pending: Pending; readonly index: number }[];
}

/**
 * The texts at each place of the object chunks a stream passed on, joined in order, for the session
 * runtime: a value split between the `delta`s of two chunks is known whole where it came from, as one
 * split between string chunks is. Only places with more than one piece are given (a string that came
 * whole was told with its chunk); what cannot be walked is left out (it was told as unreadable).
 */
export class PlaceTexts {
  private readonly places = new Map<string, { text: string; pieces: number }>();

  add(chunk: unknown): void {
    if (typeof chunk !== "object" || chunk === null) return;
    const w: Walk = { copy: false, memo: new Map(), leaves: [], answers: [], at: 0 };
    try {
      walk(chunk, [], w);
    } catch (err) {
      if (err instanceof Unreplaceable) return;
      throw err;
    }
    for (const leaf of w.leaves) {
      if (!leaf.key.startsWith("t")) continue;
      const place = this.places.get(leaf.key) ?? { text: "", pieces: 0 };
      place.text += leaf.text;
      place.pieces++;
      this.places.set(leaf.key, place);
    }
  }

  /** The joined texts of places with more than one piece. */
  joined(): string[] {
    return [...this.places.values()].filter((place) => place.pieces > 1).map((place) => place.text);
  }
}

/** The key names leading to a place (a plain object's keys, a `Map`'s primitive keys; array positions left out). */
function namesOf(path: readonly Segment[]): string[] {
  const names: string[] = [];
  for (const segment of path) {
    if (segment[0] === "k") names.push(String(segment[1]));
    else if (segment[0] === "m") names.push(String(segment[2]));
  }
  return names;
}

/**
 * Which places are text that may run on from chunk to chunk: every place without `textFields`; with
 * them, a place whose key names hold one of the fields' names in a row (`delta.content` is the place
 * `choices[0].delta.content`, and so is `message.delta.content.parts[1]`), and the chunk itself (a
 * string, bytes, or the strings of an array or `Set` chunk), whatever the fields.
 */
function textPlaces(textFields: readonly string[] | undefined): (path: readonly Segment[]) => boolean {
  if (textFields === undefined) return () => true;
  const fields = textFields.map((field) => field.split("."));
  return (path) => {
    const names = namesOf(path);
    if (names.length === 0) return true;
    return fields.some((field) => {
      for (let at = 0; at + field.length <= names.length; at++) {
        if (field.every((name, i) => names[at + i] === name)) return true;
      }
      return false;
    });
  };
}

/**
 * A {@link ChunkStreamRedactor} over the secret values (the vault values in use when the stream began).
 * With `textFields`, only the strings at those places (and the chunk itself: a string or bytes chunk) are
 * pieces of a text across chunks ({@link textPlaces}); a string anywhere else is checked whole in its
 * chunk, as a result is, and never holds the stream back.
 */
export function createChunkStreamRedactor(
  values: readonly string[],
  textFields?: readonly string[],
): ChunkStreamRedactor {
  const isText = textPlaces(textFields);
  const secrets = values.filter((s) => s !== "");
  const check = resultChecker(secrets, true);
  const redactText = createRedactor(NO_PATTERNS, { secrets: () => secrets });
  const byteSecrets = secrets.map(asUtf8Bytes);
  const redactBytes = createRedactor(NO_PATTERNS, { secrets: () => byteSecrets });
  const texts = pieceRedactors(secrets, (t) => redactText(t) as string);
  const bytes = pieceRedactors(byteSecrets, (t) => redactBytes(t) as string);
  const places = new Map<string, Place>();
  let queue: Pending[] = [];
  let held = 0;

  const answer = (place: Place, outs: readonly string[]): void => {
    for (const out of outs) {
      const slot = place.slots.shift();
      if (slot === undefined) throw new Error("a text redactor answered for a piece it was not given");
      slot.pending.answers[slot.index] = out;
      slot.pending.waiting--;
    }
  };

  /** The chunk with its leaves answered, checked again whole (its key names, numbers, a `Set`'s items). */
  const finished = (pending: Pending): Finished => {
    const drop = typeof pending.chunk === "string";
    if (!pending.leaves.some((leaf, i) => pending.answers[i] !== leaf.text)) {
      return { kind: "shown", value: pending.checked, drop: drop && pending.checked === "" };
    }
    let value: unknown;
    try {
      value = walk(pending.chunk, [], { copy: true, memo: new Map(), leaves: [], answers: pending.answers, at: 0 });
    } catch (err) {
      if (err instanceof Unreplaceable) return { kind: "withheld", why: redactText(err.message) as string };
      throw err;
    }
    const checked = check(value);
    if (checked.kind === "withheld") return checked;
    return { kind: "shown", value: checked.value, drop: drop && checked.value === "" };
  };

  /** The chunks at the front whose every leaf is answered. */
  const release = (): ChunkStep => {
    const chunks: unknown[] = [];
    while (queue.length > 0 && (queue[0] as Pending).waiting === 0) {
      const pending = queue.shift() as Pending;
      held -= pending.size;
      const done = finished(pending);
      if (done.kind === "withheld") return done;
      if (!done.drop) chunks.push(done.value);
    }
    return { kind: "shown", chunks };
  };

  return {
    push(chunk) {
      const checked = check(chunk);
      if (checked.kind === "withheld") return checked;
      const w: Walk = { copy: false, memo: new Map(), leaves: [], answers: [], at: 0 };
      try {
        walk(chunk, [], w);
      } catch (err) {
        if (err instanceof Unreplaceable) return { kind: "withheld", why: redactText(err.message) as string };
        throw err;
      }
      const size = w.leaves.reduce((n, leaf) => n + leaf.text.length, 0);
      // a string at a place that is no text across chunks is its own answer (the check saw it whole)
      const text = w.leaves.map((leaf) => isText(leaf.path));
      const pending: Pending = {
        chunk,
        checked: checked.value,
        taken: false,
        leaves: w.leaves,
        answers: w.leaves.map((leaf) => leaf.text),
        waiting: text.filter(Boolean).length,
        size,
      };
      queue.push(pending);
      held += size;
      w.leaves.forEach((leaf, index) => {
        if (text[index] !== true) return;
        let place = places.get(leaf.key);
        if (place === undefined) {
          place = { redactor: (leaf.key.startsWith("b") ? bytes : texts)(), slots: [] };
          places.set(leaf.key, place);
        }
        place.slots.push({ pending, index });
        answer(place, place.redactor.push(leaf.text));
        if (place.slots.length === 0) places.delete(leaf.key); // nothing held there: nothing to join
      });
      const step = release();
      // a chunk held back waits while the function runs on, and may change it (one object yielded again
      // and again with a new `delta`): what is passed on later is what it held when it came
      for (const waiting of queue) {
        if (waiting.taken) continue;
        const answers = waiting.leaves.map((leaf) => leaf.text);
        waiting.chunk = walk(waiting.chunk, [], {
          copy: true,
          fresh: true,
          memo: new Map(),
          leaves: [],
          answers,
          at: 0,
        });
        const again = check(waiting.chunk);
        if (again.kind === "withheld") return again;
        waiting.checked = again.value;
        waiting.taken = true;
      }
      if (step.kind === "shown" && held > MAX_HELD_TEXT) {
        return {
          kind: "withheld",
          why: `more than ${MAX_HELD_TEXT} characters of it were held back waiting to see whether they end in the start of a secret`,
        };
      }
      return step;
    },
    end() {
      for (const place of places.values()) answer(place, place.redactor.end());
      places.clear();
      const step = release();
      queue = [];
      held = 0;
      return step;
    },
    get holding() {
      return queue.length;
    },
  };
}

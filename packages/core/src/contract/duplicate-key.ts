/**
 * Repeated member names in JSON text. `JSON.parse` keeps the last value of a repeated name, other readers
 * keep the first or refuse; I-JSON (RFC 7493) forbids the repeat. An event that says one thing to this
 * gate and another to the runtime that executes it is refused rather than decided on one reading.
 */
import { Scanner } from "./json-error-offset.js";

/** A repeated name: where its second occurrence starts, the name, and its path in the document. */
export interface DuplicateKey {
  readonly offset: number;
  readonly key: string;
  readonly path: readonly (string | number)[];
}

interface Frame {
  readonly close: "}" | "]";
  readonly names: Set<string> | undefined;
  /** The member name or index being read in this container. */
  at: string | number;
}

/** Reads `"name" :` of an object member into `frame`; a repeat, or undefined. */
function readMember(s: Scanner, stack: readonly Frame[], frame: Frame): DuplicateKey | undefined | false {
  s.skipWhitespace();
  const start = s.i;
  if (s.text[start] !== '"' || !s.readString()) return false;
  const key = JSON.parse(s.text.slice(start, s.i)) as string;
  if (frame.names?.has(key) === true)
    return { offset: start, key, path: [...stack.slice(0, -1).map((f) => f.at), key] };
  frame.names?.add(key);
  frame.at = key;
  s.skipWhitespace();
  if (s.text[s.i] !== ":") return false;
  s.i++;
  return undefined;
}

/**
 * The first repeated member name in `text`, which must be JSON that `JSON.parse` accepted (names are
 * compared decoded, so `"a"` and `"\u0061"` are one name). Undefined when no object repeats a name.
 * Iterative: deep nesting cannot exhaust the stack.
 */
export function findDuplicateKey(text: string): DuplicateKey | undefined {
  const s = new Scanner(text);
  const stack: Frame[] = [];
  let expectValue = true;
  for (;;) {
    s.skipWhitespace();
    const c = text[s.i];
    if (expectValue) {
      if (c === "{" || c === "[") {
        s.i++;
        s.skipWhitespace();
        const close = c === "{" ? "}" : "]";
        if (text[s.i] === close) {
          s.i++;
          expectValue = false;
          continue;
        }
        const frame: Frame = { close, names: c === "{" ? new Set() : undefined, at: 0 };
        stack.push(frame);
        if (c === "{") {
          const found = readMember(s, stack, frame);
          if (found !== undefined) return found === false ? undefined : found;
        }
        continue;
      }
      if (c === '"' ? !s.readString() : !s.readScalar()) return undefined;
      expectValue = false;
      continue;
    }
    const top = stack[stack.length - 1];
    if (top === undefined || c === undefined) return undefined;
    if (c === top.close) {
      s.i++;
      stack.pop();
    } else if (c === ",") {
      s.i++;
      if (top.close === "}") {
        const found = readMember(s, stack, top);
        if (found !== undefined) return found === false ? undefined : found;
      } else top.at = (top.at as number) + 1;
      expectValue = true;
    } else return undefined;
  }
}

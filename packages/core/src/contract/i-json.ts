/**
 * What the JSON Schema cannot say about an event: it must be I-JSON (RFC 7493) whose arguments have an
 * RFC 8785 canonical form and carry every number exactly. An accept is bound to its arguments by
 * `audit.proposed_arguments_hash`; arguments that cannot be hashed, or whose digits may already have been
 * lost when the text was parsed, would let a tool run with arguments no one checked.
 */
import { isWellFormedString } from "../audit/audit-json.js";
import { MAX_CANONICAL_DEPTH } from "../canonical-json/index.js";
import type { Issue } from "../issues/index.js";

interface Frame {
  readonly value: unknown;
  /** Depth below the event's top-level fields (a field's value is at 0), as RFC 8785 counts from the arguments. */
  readonly depth: number;
  readonly parent: Frame | undefined;
  readonly key: string | number | undefined;
}

function pathOf(frame: Frame | undefined): (string | number)[] {
  const path: (string | number)[] = [];
  for (let f = frame; f !== undefined; f = f.parent) if (f.key !== undefined) path.unshift(f.key);
  return path;
}

const LONE_SURROGATE = "holds a lone surrogate (not valid I-JSON): the event cannot be recorded or bound as sent";

function isBeyondSafe(n: number): boolean {
  return n > Number.MAX_SAFE_INTEGER || n < -Number.MAX_SAFE_INTEGER;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The issue for one value, or undefined (its children are pushed onto `stack`, first child on top). */
function visit(frame: Frame, stack: Frame[]): Issue | undefined {
  const { value, depth } = frame;
  if (depth > MAX_CANONICAL_DEPTH) {
    const message = `nested deeper than ${MAX_CANONICAL_DEPTH} levels: the arguments have no canonical form to bind the decision to`;
    return { code: "contract_not_canonical", path: pathOf(frame).slice(0, 1), message };
  }
  if (typeof value === "string") {
    return isWellFormedString(value)
      ? undefined
      : { code: "contract_not_canonical", path: pathOf(frame), message: `string ${LONE_SURROGATE}` };
  }
  if (typeof value === "number") {
    if (!isBeyondSafe(value)) return undefined;
    const message =
      `a number beyond ±${Number.MAX_SAFE_INTEGER} cannot be carried exactly (its digits may have been lost ` +
      "when the event was parsed, so the arguments checked could differ from the ones sent): send it as a string";
    return { code: "contract_unsafe_integer", path: pathOf(frame), message };
  }
  if (Array.isArray(value)) {
    for (let i = value.length - 1; i >= 0; i--)
      stack.push({ value: value[i], depth: depth + 1, parent: frame, key: i });
  } else if (isRecord(value)) {
    const keys = Object.keys(value);
    for (const key of keys) {
      if (!isWellFormedString(key)) {
        return { code: "contract_not_canonical", path: pathOf(frame), message: `a field name ${LONE_SURROGATE}` };
      }
    }
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i] as string;
      stack.push({ value: value[key], depth: depth + 1, parent: frame, key });
    }
  }
  return undefined;
}

/** Whether one value passes, as a child at `depth`; a container is pushed to be read later. */
function childPasses(child: unknown, depth: number, containers: object[], depths: number[]): boolean {
  if (depth > MAX_CANONICAL_DEPTH) return false;
  if (typeof child === "string") return isWellFormedString(child);
  if (typeof child === "number") return !isBeyondSafe(child);
  if (typeof child === "object" && child !== null) {
    containers.push(child);
    depths.push(depth);
  }
  return true;
}

/**
 * The common case, all clear, without paths: only containers are pushed (no allocation per value), and
 * a scalar is judged where its container is read. Same verdict as the walk with paths.
 */
function passes(event: Readonly<Record<string, unknown>>): boolean {
  const containers: object[] = [event];
  const depths: number[] = [-1];
  for (let value = containers.pop(); value !== undefined; value = containers.pop()) {
    const depth = (depths.pop() as number) + 1;
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) if (!childPasses(value[i], depth, containers, depths)) return false;
    } else {
      const record = value as Record<string, unknown>;
      for (const key in record) {
        if (!isWellFormedString(key) || !childPasses(record[key], depth, containers, depths)) return false;
      }
    }
  }
  return true;
}

/**
 * The first place, in document order, where a schema-valid event is not I-JSON with exactly carried
 * arguments: a lone surrogate in any string or field name (`contract_not_canonical`), arguments nested
 * deeper than {@link MAX_CANONICAL_DEPTH} below `proposed_arguments` (`contract_not_canonical`), or a
 * number beyond ±2^53−1 (`contract_unsafe_integer`). Undefined when there is none. Iterative: deep input
 * cannot exhaust the stack.
 */
export function findNonCanonical(event: Readonly<Record<string, unknown>>): Issue | undefined {
  if (passes(event)) return undefined;
  const root: Frame = { value: event, depth: -1, parent: undefined, key: undefined };
  const stack: Frame[] = [root];
  for (let frame = stack.pop(); frame !== undefined; frame = stack.pop()) {
    const found = visit(frame, stack);
    if (found !== undefined) return found;
  }
  // the quick pass refused what the walk with paths did not place: refuse all the same (fail closed)
  return { code: "contract_not_canonical", path: [], message: "the event is not I-JSON" };
}

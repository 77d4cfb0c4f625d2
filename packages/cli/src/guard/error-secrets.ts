import { types } from "node:util";
import { GuardRefusal } from "./guard-refusal.js";
import { checkResultSecrets } from "./result-secrets.js";

/**
 * The prototypes of the errors the guard can see all of: JavaScript's own, `DOMException` (an
 * `AbortError`) and a nested guarded call's `GuardRefusal`. An instance of any other class may hold what
 * its methods, getters, `toJSON` or private fields give out, which the guard cannot check.
 */
const SEEN_WHOLE: ReadonlySet<unknown> = new Set<unknown>(
  [
    Error,
    TypeError,
    RangeError,
    SyntaxError,
    ReferenceError,
    EvalError,
    URIError,
    AggregateError,
    GuardRefusal,
    ...(typeof DOMException === "function" ? [DOMException] : []),
  ].map((kind) => kind.prototype),
);

/** The text of what a function threw; never throws itself (a value with no text, a `Proxy` whose traps throw). */
export function messageOf(err: unknown): string {
  try {
    return err instanceof Error ? String(err.message) : String(err);
  } catch {
    return "it threw a value that cannot be read as text";
  }
}

const getterOf = (property: PropertyDescriptor): unknown =>
  Object.values(property).find((v) => typeof v === "function");

/** Own keys an error has by its kind, set by the copy itself (the message checked, the stack rebuilt). */
const SET_BY_COPY: ReadonlySet<string | symbol> = new Set(["message", "stack"]);

/**
 * What a function's error is passed on as, given `hidden`, its message with the secrets replaced: without
 * credentials, itself (the guard gave the call no secret); else never the object the function threw, which
 * it may still hold and write a secret into after the check (`err.message = \`… ${token}\``, a `cause` set
 * later), but a copy made as it was checked: an error of a kind the guard sees whole (JavaScript's own, a
 * `DOMException`, a nested call's `GuardRefusal`) as a new error of that kind, any other as a plain `Error`
 * of the same `name`; with the message `hidden`, the `name` and `stack` (the original's frames) with their
 * secrets replaced, and its own properties: copies of them all (a `cause`, a response) when it is of a kind
 * seen whole and they hold no secret and nothing the guard cannot check, else only those that are plain
 * values (`code`, `status`), their secrets replaced. So a secret never reaches the caller through a cause, a
 * response, a stack written afterwards, a getter, a class instance's methods or private fields, or a write
 * made after the check. A thrown value that is no error is passed on as it is when it is a primitive holding
 * no secret, as a checked copy when it is an object holding none, else as a plain `Error` with `hidden`.
 */
export function errorWithoutSecrets(
  secrets: (() => readonly string[]) | undefined,
  err: unknown,
  hidden: string,
  redact: (text: string) => string,
): unknown {
  if (secrets === undefined) return err;
  try {
    return checkedError(secrets, err, hidden, redact);
  } catch {
    // what cannot even be looked at (a `Proxy` whose traps throw) is not passed on
    return new Error(hidden);
  }
}

function checkedError(
  secrets: () => readonly string[],
  err: unknown,
  hidden: string,
  redact: (text: string) => string,
): unknown {
  // a `Proxy` can answer every read differently: what the guard read of it is no promise
  if (types.isProxy(err)) return new Error(hidden);
  if (!(err instanceof Error)) {
    const checked = checkResultSecrets(secrets, err);
    if (hidden !== messageOf(err) || checked.kind !== "shown" || checked.value !== err) return new Error(hidden);
    if (typeof err !== "object" || err === null) return err;
    const copy = checkResultSecrets(secrets, err, true);
    return copy.kind === "shown" ? copy.value : new Error(hidden);
  }
  const proto: unknown = Object.getPrototypeOf(err);
  const whole = SEEN_WHOLE.has(proto);
  const own: Record<string | symbol, unknown> = {};
  let stack: string | undefined;
  for (const key of Reflect.ownKeys(err)) {
    const property = Object.getOwnPropertyDescriptor(err, key) as PropertyDescriptor;
    // a getter is carried as the function it is: it cannot be checked, so nothing but plain values is copied
    if (!("value" in property)) own[key] = getterOf(property);
    else if (key === "stack" && typeof property.value === "string") stack = property.value;
    else if (key !== "message") own[key] = property.value; // the message is checked as `hidden`
  }
  const checked = checkResultSecrets(secrets, own);
  // all its properties, as copies made now, when nothing in them is secret or beyond the guard's sight
  const all = whole && checked.kind === "shown" && checked.value === own;
  const copied = all ? checkResultSecrets(secrets, own, true) : checked;
  const values: Record<string | symbol, unknown> = copied.kind === "shown" ? copied.value : {};
  const out = newErrorLike(err, proto, whole, hidden, redact);
  for (const key of Reflect.ownKeys(values)) {
    if (SET_BY_COPY.has(key)) continue;
    const value = values[key];
    const plainValue = value === null || (typeof value !== "object" && typeof value !== "function");
    if (!all && (!plainValue || key === "cause")) continue;
    const original = Object.getOwnPropertyDescriptor(err, key);
    Object.defineProperty(out, key, {
      value,
      writable: original?.writable ?? true,
      enumerable: original?.enumerable ?? true,
      configurable: true,
    });
  }
  const name = (out as { name?: unknown }).name;
  Object.defineProperty(out, "stack", {
    value: stackOf(typeof name === "string" ? name : "Error", hidden, stack, redact),
    writable: true,
    enumerable: false,
    configurable: true,
  });
  return out;
}

/**
 * A new error for `err`: of its kind when the guard sees that kind whole (a `GuardRefusal` a native error
 * whose prototype is `GuardRefusal`'s, its fields copied after), else a plain `Error` named as `err` is.
 */
function newErrorLike(
  err: Error,
  proto: unknown,
  whole: boolean,
  hidden: string,
  redact: (text: string) => string,
): Error {
  const name = typeof err.name === "string" ? redact(err.name) : undefined;
  if (!whole) {
    const plain = new Error(hidden);
    if (name !== undefined) plain.name = name;
    return plain;
  }
  if (typeof DOMException === "function" && proto === DOMException.prototype) {
    return new DOMException(hidden, name);
  }
  if (proto === AggregateError.prototype) return new AggregateError([], hidden);
  const Kind = (proto as { constructor: ErrorConstructor }).constructor;
  return proto === GuardRefusal.prototype ? Reflect.construct(Error, [hidden], Kind) : new Kind(hidden);
}

/**
 * The copy's stack: `name: message` (as V8 writes it, the message checked) and the frames of the original's
 * stack (its lines from the first `    at …`), their secrets replaced; only the first line when it had none.
 */
function stackOf(name: string, message: string, stack: string | undefined, redact: (text: string) => string): string {
  const head = message === "" ? name : `${name}: ${message}`;
  if (stack === undefined) return head;
  const lines = stack.split("\n");
  const first = lines.findIndex((line) => /^\s+at /.test(line));
  return first < 0 ? head : [head, ...lines.slice(first).map(redact)].join("\n");
}

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

/** Own keys an `Error` has by its kind, never copied onto the plain error that replaces one. */
const NOT_COPIED: ReadonlySet<string | symbol> = new Set(["message", "stack", "name", "cause"]);

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

/**
 * What a function's error is passed on as, given `hidden`, its message with the secrets replaced: itself
 * when no secret can be in it (no credentials; or an error of a kind the guard sees whole whose message,
 * `stack`, `name` and own properties — a `cause`, a response — hold none and nothing the guard cannot
 * check), else a plain `Error` with the message `hidden`, the same `name` and the own properties that are
 * plain values (`code`, `status`), their secrets replaced. So a secret never reaches the caller through a
 * cause, a response, a stack written afterwards, a getter, or a class instance's methods or private fields.
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
  let carried: unknown = err;
  let whole = true;
  if (err instanceof Error) {
    whole = SEEN_WHOLE.has(Object.getPrototypeOf(err));
    const own: Record<string | symbol, unknown> = {};
    for (const key of Reflect.ownKeys(err)) {
      const property = Object.getOwnPropertyDescriptor(err, key) as PropertyDescriptor;
      // a getter is carried as the function it is: it cannot be checked, so the error is not passed on
      if (!("value" in property)) own[key] = getterOf(property);
      else if (key !== "message") own[key] = property.value; // the message is checked as `hidden`
    }
    carried = own;
    if (typeof err.name !== "string" || redact(err.name) !== err.name) whole = false;
  }
  const checked = checkResultSecrets(secrets, carried);
  if (whole && hidden === messageOf(err) && checked.kind === "shown" && checked.value === carried) return err;
  const plain = new Error(hidden);
  if (err instanceof Error && typeof err.name === "string") plain.name = redact(err.name);
  if (checked.kind === "shown" && err instanceof Error) {
    const values = checked.value as Record<string | symbol, unknown>;
    for (const key of Reflect.ownKeys(values)) {
      const value = values[key];
      const plainValue = value === null || (typeof value !== "object" && typeof value !== "function");
      if (!NOT_COPIED.has(key) && plainValue) (plain as unknown as Record<string | symbol, unknown>)[key] = value;
    }
  }
  return plain;
}

import { CATEGORIES, suggest } from "@acp/core";

type Kind = "string" | "boolean" | "function" | "any" | "fields";

/** The options of `openGuard` and what each must be. */
const GUARD_OPTIONS: Readonly<Record<string, Kind>> = {
  home: "string",
  policy: "string",
  config: "string",
  intent: "any",
  ask: "function",
  terminal: "boolean",
  agent: "string",
  server: "string",
  passphrase: "string",
  log: "function",
  now: "function",
};

/** The options of one guarded tool. */
const TOOL_OPTIONS: Readonly<Record<string, Kind>> = {
  server: "string",
  category: "string",
  trusted: "boolean",
  textFields: "fields",
};

/** A field of `textFields`: key names joined by dots (`delta.content`), none empty. */
const FIELD = /^[^.]+(?:\.[^.]+)*$/;

/** The problem of a `textFields` value, or `undefined` for an array of fields. */
function fieldsProblem(value: unknown): string | undefined {
  if (!Array.isArray(value))
    return `option \`textFields\` must be an array of field names, not ${value === null ? "null" : typeof value}`;
  const bad = (value as unknown[]).find((field) => typeof field !== "string" || !FIELD.test(field));
  if (bad === undefined) return undefined;
  const shown = typeof bad === "string" ? `\`${bad}\`` : `a ${bad === null ? "null" : typeof bad}`;
  return `option \`textFields\` holds ${shown}: each is a field's key names joined by dots (\`delta.content\`)`;
}

function problemsOf(what: string, given: unknown, known: Readonly<Record<string, Kind>>): string[] {
  if (given === undefined) return [];
  if (typeof given !== "object" || given === null || Array.isArray(given)) return [`${what} must be an object`];
  const problems: string[] = [];
  for (const [key, value] of Object.entries(given)) {
    const kind = known[key];
    if (kind === undefined) {
      const near = suggest(key, Object.keys(known));
      problems.push(`unknown option \`${key}\`${near !== undefined ? ` (did you mean \`${near}\`?)` : ""}`);
    } else if (kind === "fields") {
      const problem = value === undefined ? undefined : fieldsProblem(value);
      if (problem !== undefined) problems.push(problem);
    } else if (kind !== "any" && value !== undefined && typeof value !== kind) {
      problems.push(`option \`${key}\` must be a ${kind}, not ${value === null ? "null" : typeof value}`);
    } else if (kind === "string" && value === "") {
      problems.push(`option \`${key}\` is empty`);
    }
  }
  return problems;
}

/**
 * Throws a `TypeError` naming every problem of `openGuard`'s options: an unknown name (a typo would
 * otherwise be ignored: `polcy` leaves the home's policy in force), or a value of the wrong type (an
 * `ask` that is not a function would approve nothing, silently).
 */
export function checkGuardOptions(options: unknown): void {
  const problems = problemsOf("the options of openGuard", options, GUARD_OPTIONS);
  if (problems.length > 0) throw new TypeError(`openGuard: ${problems.join("; ")}`);
}

/** The prototype of every `async function*`. */
const ASYNC_GENERATOR_FUNCTION: unknown = Object.getPrototypeOf(async function* () {
  /* only its prototype is used */
});

/**
 * Throws a `TypeError` naming every problem of one `guard(tool, fn, options)` (`kind` "call") or
 * `guardStream(tool, fn, options)` ("stream"), when it is called. An `async function*` given to `guard`
 * is one: its result, a stream, would be withheld whole or read by nobody.
 */
export function checkToolOptions(tool: unknown, fn: unknown, options: unknown, kind: "call" | "stream"): void {
  const problems: string[] = [];
  if (typeof tool !== "string" || tool === "") problems.push("the tool's name must be a non-empty string");
  if (typeof fn !== "function") problems.push("the tool must be a function");
  else if (kind === "call" && Object.getPrototypeOf(fn) === ASYNC_GENERATOR_FUNCTION) {
    problems.push("the tool is an async generator function: wrap it with `guardStream`, which checks each chunk");
  }
  problems.push(...problemsOf("the tool's options", options, TOOL_OPTIONS));
  if (kind === "call" && (options as { textFields?: unknown } | undefined)?.textFields !== undefined) {
    problems.push("option `textFields` is for a streaming tool: wrap it with `guardStream`");
  }
  const category = (options as { category?: unknown } | undefined)?.category;
  if (typeof category === "string" && !(CATEGORIES as readonly string[]).includes(category)) {
    const near = suggest(category, CATEGORIES);
    const hint = near !== undefined ? `did you mean \`${near}\`?` : `one of ${CATEGORIES.join(", ")}`;
    problems.push(`unknown category \`${category}\` (${hint})`);
  }
  if (problems.length > 0) {
    const name = typeof tool === "string" && tool !== "" ? ` \`${tool}\`` : "";
    throw new TypeError(`guard${name}: ${problems.join("; ")}`);
  }
}

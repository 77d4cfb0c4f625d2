/**
 * Duplicate and prototype keys in JSON text. `JSON.parse` keeps the last of two equal keys, so
 * `{"decision":"denied","decision":"approved"}` reads as approved while a client, a gateway or a log that
 * keeps the first (or refuses) sees denied: a text whose object holds a key twice (RFC 8259 names SHOULD be
 * unique; I-JSON, RFC 7493, says MUST), or a key that reaches a prototype, is refused by every reader of
 * untrusted JSON here (the service's body parser, the webhook channel's callbacks).
 */
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;

/** One open object or array while the text is walked. */
interface Frame {
  /** The keys met so far (objects only). */
  readonly keys: Set<string> | null;
  /** The next string is a key (objects only). */
  expectKey: boolean;
  /** The last key met (objects only), the name the next nested value sits under. */
  lastKey: string | null;
  /** The key this object or array sits under in its parent object, or null. */
  readonly under: string | null;
}

function shown(key: string): string {
  return JSON.stringify(key.length > 80 ? `${key.slice(0, 80)}…` : key);
}

/**
 * The first key problem of a text `JSON.parse` accepted, or null: a key twice in one object, a
 * `__proto__` key, or a `prototype` key in an object under `constructor`. Walks the text once; strings are
 * skipped with `indexOf`, and a key is decoded only when it holds an escape (`"\u0074ool"` is `"tool"`).
 */
export function findKeyProblem(text: string): string | null {
  const stack: Frame[] = [];
  let top: Frame | undefined;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      let end = text.indexOf('"', i + 1);
      for (;;) {
        let slashes = 0;
        while (text.charCodeAt(end - 1 - slashes) === BACKSLASH) slashes++;
        if (slashes % 2 === 0) break;
        end = text.indexOf('"', end + 1);
      }
      if (top?.keys != null && top.expectKey) {
        const rawKey = text.slice(i + 1, end);
        const key = rawKey.includes("\\") ? (JSON.parse(text.slice(i, end + 1)) as string) : rawKey;
        if (top.keys.has(key)) return `the key ${shown(key)} appears twice in one object`;
        if (key === "__proto__") return "the key `__proto__` is refused";
        if (key === "prototype" && top.under === "constructor") {
          return "the key `prototype` inside `constructor` is refused";
        }
        top.keys.add(key);
        top.lastKey = key;
        top.expectKey = false;
      }
      i = end;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      const under = top?.keys != null ? top.lastKey : null;
      if (top !== undefined) stack.push(top);
      top = { keys: c === OPEN_OBJECT ? new Set() : null, expectKey: c === OPEN_OBJECT, lastKey: null, under };
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      top = stack.pop();
    } else if (c === COMMA && top?.keys != null) {
      top.expectKey = true;
    }
  }
  return null;
}

/**
 * Text a reader can decode from a result: runs of Base64 and of percent-encoding (`Ignore%20previous…`). An
 * injection need not be written in the clear — a model decodes `SWdub3JlIHByZXZpb3Vz…` as readily as it reads
 * it — so the instruction scorer reads what these runs decode to as well. Decoded text that is not readable
 * (binary data, an image, a random token) is dropped.
 */

/** Shortest Base64 run decoded (18 bytes of text: a short sentence). */
const MIN_BASE64 = 24;
/** Longest run decoded; a longer one is data (an attachment), not something written for a model to read. */
const MAX_RUN = 65_536;
/** Most runs decoded from one text. */
const MAX_RUNS = 1_000;

const BASE64_RUN = /[A-Za-z0-9+/]{24,}={0,2}|[A-Za-z0-9_-]{24,}/g;
const PERCENT_ESCAPE = /%[0-9A-Fa-f]{2}/g;

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Decoded text a person could read: valid UTF-8, with letters and a space, and nearly no control characters. */
function readable(bytes: Uint8Array): string | undefined {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return undefined;
  }
  if (!/\p{L}/u.test(text) || !text.includes(" ")) return undefined;
  const controls = text.match(/[\p{Cc}\uFFFD]/gu)?.length ?? 0;
  return controls <= text.length / 50 ? text : undefined;
}

function fromBase64(run: string): string | undefined {
  if (run.length < MIN_BASE64 || run.length > MAX_RUN || !/[a-z]/.test(run) || !/[A-Z]/.test(run)) return undefined;
  return readable(Buffer.from(run, /[-_]/.test(run) ? "base64url" : "base64"));
}

function fromPercent(run: string): string | undefined {
  if (run.length > MAX_RUN) return undefined;
  try {
    return decodeURIComponent(run);
  } catch {
    return undefined;
  }
}

/**
 * What the Base64 and percent-encoded runs of `text` decode to, one per line, when it reads as text; `""` when
 * there is none. At most {@link MAX_RUNS} runs.
 */
export function decodeEmbeddedText(text: string): string {
  const out: string[] = [];
  // run by run, as `matchAll` gives them, without its copy of the pattern (a run is never empty)
  BASE64_RUN.lastIndex = 0;
  try {
    for (let match = BASE64_RUN.exec(text); match !== null; match = BASE64_RUN.exec(text)) {
      if (out.length >= MAX_RUNS) break;
      const decoded = fromBase64(match[0]);
      if (decoded !== undefined) out.push(decoded);
    }
  } finally {
    BASE64_RUN.lastIndex = 0;
  }
  // a percent-encoded run is the word (no white space) around each escape, each word decoded once
  let done = 0;
  if (text.includes("%")) {
    for (const match of text.matchAll(PERCENT_ESCAPE)) {
      if (out.length >= MAX_RUNS) break;
      if (match.index < done) continue;
      let start = match.index;
      while (start > done && match.index - start < MAX_RUN && !/\s/.test(text[start - 1] as string)) start--;
      const end = wordEnd(text, match.index);
      done = end;
      const decoded = fromPercent(text.slice(start, end));
      if (decoded !== undefined) out.push(decoded);
    }
  }
  return out.join("\n");
}

function wordEnd(text: string, from: number): number {
  let end = from;
  while (end < text.length && end - from < MAX_RUN && !/\s/.test(text[end] as string)) end++;
  return end;
}

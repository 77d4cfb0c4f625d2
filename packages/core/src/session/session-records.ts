/**
 * What feeds a session's provenance: tool results, user input and system values (executed calls: session-executions.ts).
 * Recording untrusted content only ever adds taint; it has no path to the intent or the plan.
 */
import { compileActionPatterns, type ActionPatterns } from "./action-name.js";
import { chargeStoreBudget, tightestStoreBudget, MAX_STORE_CHARS } from "./store-budget.js";
import {
  createProvenanceEntry,
  identityTokensOf,
  keptChars,
  MAX_ENTRY_CHARS,
  type ProvenanceEntry,
  type ProvenanceEntryOptions,
  type ProvenanceLabel,
} from "./provenance.js";
import { EVERY_PIECE } from "./provenance-budget.js";
import type { PendingFetch, SessionCore } from "./session-core.js";
import { rememberedIdentities } from "./provenance-memory.js";
import { MAX_TOKENS_PER_TEXT } from "./value-tokens.js";
import { rememberedForms } from "./value-aliases.js";

/** Longest user input or system value accepted (longer is `invalid_record`, nothing recorded). */
export const MAX_INPUT_CHARS = 1_000_000;
const MAX_NAME = 256;

/** Options of `recordToolResult`. */
export interface ToolResultOptions {
  /** Overrides the server's configured trust: `true` labels the result `system_policy`, `false` untrusted. */
  readonly trusted?: boolean;
  /**
   * The result is the call's error (MCP's `isError`, a JSON-RPC error relayed as one): what the server says
   * about the call, not its answer, so neither configured trust nor a directory covers it (see {@link isError}).
   */
  readonly error?: boolean;
  /**
   * The `seq` of the executed call this is the result of (what `recordExecution` returned): the result is read
   * with that call's note — whether the user named what it fetched, what a trusted answer may echo — not with
   * the oldest call of the tool still waiting. Calls of one tool that come back out of order are paired right. A
   * call whose note is gone (never executed, already answered) vouches for nothing it was asked.
   */
  readonly call?: number;
  /**
   * Hidden characters (Unicode tag characters, bidi overrides or isolates) were removed from the result before
   * the agent read it (`acp proxy`): an injection attempt, so the result is untrusted whatever the server's
   * trust, and counts as instruction-like content read (`instructions_seen`, signal `hidden_text`).
   */
  readonly hiddenTextRemoved?: boolean;
}

/**
 * Most provenance entries one session keeps. Past it, as past {@link MAX_STORE_CHARS}, content is no longer
 * kept to trace argument values to, the session marks its provenance incomplete, and consequential calls ask;
 * each result is still scored for instruction-like text.
 */
export const MAX_ENTRIES = 50_000;

/** Most instruction-bearing sources a session lists (the judgment reads whether there is one, and the first). */
const MAX_INSTRUCTION_SOURCES = 1_000;

/**
 * Keeps the identifiers of an untrusted entry for the agent's later sessions (and this one's, past MAX_ENTRIES),
 * but for those the user named in this session: a result that repeats the address the user asked to write to
 * (`sent to bob@corp.example`) does not make that address tainted tomorrow. Nor a whole entry of a configured
 * directory's answer (the user's contacts), which vouches for it as the judgment does (`directory:…`): the
 * contact looked up today is not tainted tomorrow.
 */
function rememberUntrusted(core: SessionCore, entry: ProvenanceEntry, content: unknown): void {
  const memory = core.memory;
  if (memory === undefined) return;
  // what the entry keeps stops at the per-text limit (10,000 identifiers, repeats counted: text of fewer than
  // MAX_TOKENS_PER_TEXT characters holds fewer) and at the session's room: the memory reads the rest too
  const whole = entry.truncated || entry.text.length >= MAX_TOKENS_PER_TEXT;
  // with the spellings a reader takes for the same identifiers (a `+tag` off, look-alikes folded, decoded runs)
  const tokens = [...(whole ? identityTokensOf(content) : entry.tokens), ...rememberedForms(entry.aliases)];
  const users = core.userEntries();
  const vouched = (id: string): boolean => {
    const value = id.slice(id.indexOf(":") + 1);
    return (
      entry.directory?.has(value) === true &&
      entry.instructions?.contains_instructions !== true &&
      !entry.echoes.has(value)
    );
  };
  const identities = rememberedIdentities(tokens).filter((id) => !users.some((u) => u.tokens.has(id)) && !vouched(id));
  if (identities.length > 0) memory.remember(identities, entry.source);
}

/**
 * Replaces the intent's entries (`user_input`, source `intent@…`) with `values` (`[source, text]`). They are
 * charged to the session's store as any other entry is: what the old ones kept is given back first, and past
 * the room (or {@link MAX_ENTRIES}) the new ones are cut, the session marks its provenance incomplete and
 * consequential calls ask. Without it an intent of 64 keys of 1,000 values each kept 64 million characters
 * outside every bound, in each session of a process.
 */
export function replaceIntentEntries(core: SessionCore, values: readonly (readonly [string, string])[]): void {
  let freed = 0;
  core.entries = core.entries.filter((e) => {
    if (e.label !== "user_input" || !e.source.startsWith("intent@")) return true;
    freed += keptChars(e);
    return false;
  });
  core.storeChars = Math.max(0, core.storeChars - freed);
  const shared = core.deps.storeBudget;
  if (shared !== undefined && freed > 0) chargeStoreBudget(shared, -freed);
  for (const [source, text] of values) addEntry(core, "user_input", source, text);
}

function addEntry(
  core: SessionCore,
  label: ProvenanceLabel,
  source: string,
  content: unknown,
  options: ProvenanceEntryOptions = {},
): ProvenanceEntry {
  // past MAX_ENTRIES the content is still scored for instructions, but no longer kept to trace values to
  const full = core.entries.length >= MAX_ENTRIES;
  const shared = core.deps.storeBudget;
  const tightest = shared === undefined ? undefined : tightestStoreBudget(shared);
  const sharedRoom = tightest === undefined ? Number.POSITIVE_INFINITY : tightest.room;
  const ownRoom = MAX_STORE_CHARS - core.storeChars;
  const room = full ? MAX_ENTRY_CHARS : Math.min(ownRoom, sharedRoom);
  // the store counts what an entry keeps, its tokens and aliases too (an entry not kept takes no room)
  const entry = createProvenanceEntry(label, source, content, room, full ? options : { ...options, room });
  if (label === "external_untrusted") rememberUntrusted(core, entry, content);
  if (!full) {
    const kept = keptChars(entry);
    core.entries.push(entry);
    core.storeChars += kept;
    if (shared !== undefined) chargeStoreBudget(shared, kept);
  }
  if ((full || entry.truncated) && !core.provenanceIncomplete) {
    const holders = tightest?.budget.holders ?? "the sessions of this process";
    const what = full
      ? `the session holds ${MAX_ENTRIES} entries, so content from \`${source}\` is no longer tracked`
      : sharedRoom < ownRoom
        ? `content from \`${source}\` was cut: ${holders} keep at most ${tightest?.budget.max ?? 0} characters together`
        : `content from \`${source}\` was cut`;
    markProvenanceIncomplete(core, what);
  }
  if (entry.instructions?.contains_instructions === true) {
    // the judgment reads whether there is one and the first (kept: the first MAX_INSTRUCTION_SOURCES)
    if (core.instructionSources.length < MAX_INSTRUCTION_SOURCES) core.instructionSources.push(source);
    const kinds = [...new Set(entry.instructions.signals.map((s) => s.kind))].join(", ");
    core.emit(
      "instructions_detected",
      `\`${source}\` reads like instructions (score ${entry.instructions.score}: ${kinds})`,
    );
  }
  return entry;
}

/**
 * Marks the session's provenance incomplete (once; emits `provenance_incomplete` with `what`): content
 * entered it that is not kept to trace values to, so from now on every consequential call also asks.
 */
export function markProvenanceIncomplete(core: SessionCore, what: string): void {
  if (core.provenanceIncomplete) return;
  core.provenanceIncomplete = true;
  core.emit("provenance_incomplete", `${what}; consequential calls now ask`, "provenance_incomplete");
}

/**
 * A tool's result entered the session but could not be recorded (`why`: the runtime's error, a result it
 * could not read): nothing of it can be traced to, so the session judges as if it held anything.
 */
export function recordUnreadableResult(core: SessionCore, server: unknown, tool: unknown, why: unknown): void {
  const name = (v: unknown): string => (typeof v === "string" ? v.slice(0, MAX_NAME) : "?");
  const reason = typeof why === "string" ? why.slice(0, 500) : "unknown error";
  markProvenanceIncomplete(core, `the result of \`${name(server)}.${name(tool)}\` could not be recorded (${reason})`);
}

function isName(value: unknown): value is string {
  return typeof value === "string" && value.length > 0 && value.length <= MAX_NAME;
}

/** The configured directory a tool's answers belong to, if any (the first matching entry of `directories`). */
export function directoryFor(core: SessionCore, names: readonly string[]): ProvenanceEntryOptions {
  for (const d of core.settings.settings.directories) {
    const compiled = directoryPattern(d.tool);
    if (compiled !== undefined && compiled.match(names) !== undefined)
      return { directory: d.fields === undefined ? {} : { fields: d.fields } };
  }
  return {};
}

/** Most directory globs kept compiled (past it, they start over). */
const MAX_KEPT_DIRECTORY_PATTERNS = 256;
const directoryPatterns = new Map<string, ActionPatterns | undefined>();

/** A directory's `tool` glob compiled (undefined when it does not compile), once per glob, not once per result. */
function directoryPattern(tool: string): ActionPatterns | undefined {
  if (directoryPatterns.has(tool)) return directoryPatterns.get(tool);
  const compiled = compileActionPatterns([tool], ["directories"]);
  const value = compiled.ok ? compiled.value : undefined;
  if (directoryPatterns.size >= MAX_KEPT_DIRECTORY_PATTERNS) directoryPatterns.clear();
  directoryPatterns.set(tool, value);
  return value;
}

/**
 * Whether a result recorded under `tool` is a server's answer: a tool's result, or what `resources/read` or
 * `prompts/get` returned; not what it says otherwise, recorded under a protocol method's name.
 */
function isAnswer(tool: string): boolean {
  return !tool.includes("/") || tool === "resources/read" || tool === "prompts/get";
}

/**
 * Whether content is a tool's error as MCP writes one (an object whose `isError` is `true`); content that
 * cannot be read so (a getter that throws) counts as one: it then vouches for nothing.
 */
function isError(content: unknown): boolean {
  if (typeof content !== "object" || content === null || Array.isArray(content)) return false;
  try {
    return (content as { readonly isError?: unknown }).isError === true;
  } catch {
    return true;
  }
}

/**
 * Records a tool's result with its provenance label and source `server.tool#n`; the answer of a configured
 * directory also keeps its whole entries. A tool's error is untrusted whatever the server's configured trust
 * (only a caller's explicit `trusted: true` labels it trusted), and is never a directory's answer.
 */
export function recordToolResult(
  core: SessionCore,
  server: unknown,
  tool: unknown,
  content: unknown,
  options: ToolResultOptions,
  fetched?: PendingFetch,
): ProvenanceEntry {
  if (!isName(server) || !isName(tool))
    return core.fail("invalid_record", "a tool result needs a server and a tool name of 1 to 256 characters");
  if (options.trusted !== undefined && typeof options.trusted !== "boolean")
    return core.fail("invalid_record", "`trusted` must be true or false");
  if (options.error !== undefined && typeof options.error !== "boolean")
    return core.fail("invalid_record", "`error` must be true or false");
  if (options.hiddenTextRemoved !== undefined && typeof options.hiddenTextRemoved !== "boolean")
    return core.fail("invalid_record", "`hiddenTextRemoved` must be true or false");
  if (options.call !== undefined && !(Number.isSafeInteger(options.call) && options.call > 0))
    return core.fail("invalid_record", "`call` must be the `seq` of an executed call (a positive whole number)");
  const hidden = options.hiddenTextRemoved === true;
  // What a server says besides answering (a log line, a progress message, a sampling request, a completion,
  // recorded under the method's name: `notifications/message`) may echo what it was asked: neither a trusted
  // server's nor a directory's answer, it is untrusted. So is the error of a call (`file /x/<the attacker's
  // IBAN> not found`): it speaks of what it was asked, in words the echoes of its arguments may not catch.
  // So is a result that smuggled hidden text: whoever wrote it into the server's answer is not the server.
  const answer = isAnswer(tool) && options.error !== true && !hidden && !isError(content);
  const configured = answer && core.settings.trustedServers.match([server, `${server}.${tool}`]) !== undefined;
  const trusted = !hidden && (options.trusted ?? configured);
  core.toolResults++;
  const source = `${server}.${tool}#${core.toolResults}`;
  const directory = answer ? directoryFor(core, [server, `${server}.${tool}`]) : {};
  // the call's own note when recorded with it; else the oldest call of this tool whose result is still to come
  const pending = fetched ?? core.takeNote(`${server}.${tool}`, options.call);
  // the call named has no note left: its answer may echo anything it was asked, so it vouches for none of it
  const echoes = pending === undefined && options.call !== undefined ? EVERY_PIECE : pending?.echoes;
  const entryOptions: ProvenanceEntryOptions = {
    ...directory,
    ...(pending?.named === true ? { named_source: true } : {}),
    ...(echoes !== undefined && echoes.size > 0 ? { echoes } : {}),
    ...(hidden ? { hidden_text: true } : {}),
  };
  const entry = addEntry(core, trusted ? "system_policy" : "external_untrusted", source, content, entryOptions);
  core.emit("tool_result_recorded", `result of \`${server}.${tool}\` recorded as ${entry.label} (\`${source}\`)`);
  return entry;
}

/** Records what the user said (trusted for provenance; it does not change the intent). */
export function recordUserInput(core: SessionCore, text: unknown): ProvenanceEntry {
  if (typeof text !== "string" || text.length > MAX_INPUT_CHARS)
    return core.fail("invalid_record", "user input must be a string of at most 1,000,000 characters");
  core.userInputs++;
  const entry = addEntry(core, "user_input", `user#${core.userInputs}`, text);
  core.emit("user_input_recorded", `user input recorded (\`${entry.source}\`)`);
  return entry;
}

/** Records a value the system itself supplies (configuration, a trusted directory), labelled `system_policy`. */
export function recordSystemValue(core: SessionCore, source: unknown, text: unknown): ProvenanceEntry {
  if (!isName(source) || typeof text !== "string" || text.length > MAX_INPUT_CHARS)
    return core.fail("invalid_record", "a system value needs a source name and a string");
  const entry = addEntry(core, "system_policy", `system:${source}`, text);
  core.emit("user_input_recorded", `system value recorded (\`${entry.source}\`)`);
  return entry;
}

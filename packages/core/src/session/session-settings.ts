/**
 * The session settings a deployment chooses (snake_case, as read from YAML or JSON), with their defaults.
 */
import type { Issue, Result } from "../issues/index.js";
import { compileClassificationOverrides } from "../classify/index.js";
import type { ClassificationOverride } from "../policy/index.js";
import { CATEGORIES, RISK_LEVELS } from "../request/index.js";
import { compileActionPatterns } from "./action-name.js";
import { quoteValue } from "./errors.js";
import { suggest } from "../suggest/index.js";
import { parseTransitionRules, type TransitionRule } from "./transitions.js";
import { PIECE_KINDS, type PieceKind } from "./value-tokens.js";

/**
 * N consequential calls, or M calls of any kind (a burst of reads: an agent scanning the inbox), within a window
 * suspend the session until a person resumes it. At least one of the two counts is set.
 */
export interface KillSwitchSettings {
  readonly consequential_calls?: number;
  /** Every call counts, reads too. */
  readonly calls?: number;
  readonly window_seconds: number;
}

/** One directory: a glob over `server` or `server.tool`, and optionally the keys whose values are its entries. */
export interface DirectorySetting {
  readonly tool: string;
  readonly fields?: readonly string[];
}

/**
 * Watching reads. A read changes nothing, but the agent that makes it may be following text it read: a read
 * whose argument (a URL, a sender, a search) comes only from untrusted content can carry data out to whoever
 * wrote that content, and any call after instruction-like text may be that text's doing.
 */
export interface ReadSettings {
  /** Once instruction-like untrusted content was read, `ask` before every later read too (default `accept`). */
  readonly after_instructions: "accept" | "ask";
  /** A read whose tracked argument comes only from untrusted content: `ask` (default `accept`). */
  readonly tainted_arguments: "accept" | "ask";
}

/** Settings of one session. Every field has a default (see {@link DEFAULT_SESSION_SETTINGS}). */
export interface SessionSettings {
  /** Whether execution needs an approved plan (`true`) or the intent alone bounds actions. */
  readonly require_plan: boolean;
  /** An action the approved plan does not name: `refuse` it or `ask` a person. */
  readonly off_plan: "refuse" | "ask";
  /** Lifetime of an authority token. */
  readonly token_ttl_seconds: number;
  /** Globs over `server` or `server.tool` whose results are trusted (`system_policy`). */
  readonly trusted_servers: readonly string[];
  readonly transitions: readonly TransitionRule[];
  readonly kill_switch: KillSwitchSettings | null;
  /** Once instruction-like untrusted content was read, ask for every consequential call. */
  readonly escalate_after_instructions: boolean;
  /** What the session watches on calls that only read (category `read`); both off by default. */
  readonly reads: ReadSettings;
  readonly provenance: {
    readonly track: readonly PieceKind[];
    /** Top-level argument names whose values are not tracked (references such as `file_id`; never destinations). */
    readonly untracked_arguments: readonly string[];
    /** Top-level argument names holding payload (`body`, `title`): only identifiers inside them are tracked. */
    readonly payload_arguments: readonly string[];
    /**
     * Top-level argument names holding a label the agent may word itself (an event's `title`): tracked whole
     * (copied from untrusted text, it is tainted), but an unknown label does not ask under `unknown: ask`.
     */
    readonly label_arguments: readonly string[];
    /**
     * A tracked value no entry of the session holds (the agent wrote it): `accept` it (the default) or `ask`.
     * `ask` also stops destinations that untrusted text only spelled out in pieces or paraphrased.
     */
    readonly unknown: "accept" | "ask";
    /**
     * Trust an identifier from a result the user named (fetched with an argument the user typed) for a call
     * whose other destination argument the user typed (see `deriveProvenance`). Default false.
     */
    readonly named_sources: boolean;
    /**
     * Hours an identifier read in untrusted content stays tainted for the agent's later sessions (a front end
     * with a {@link ProvenanceMemory} keeps it: `acp proxy` and `acp run` in the home's `state.db`). 0: off.
     * Default 24.
     */
    readonly remember_hours: number;
  };
  /**
   * Tools whose answers are directories of the user's own world (channel and member lists, the address book):
   * a value that is one whole entry of such an answer (under `fields`, when given) is trusted.
   */
  readonly directories: readonly DirectorySetting[];
  /** Classification overrides (as in the policy's `classify:`), for deciding what is consequential. */
  readonly classify: readonly ClassificationOverride[];
}

/** Longest `provenance.remember_hours`: 30 days. */
export const MAX_REMEMBER_HOURS = 720;

/** The defaults: plans required, off-plan refused, 60 s tokens, nothing trusted, no rules, no kill switch. */
export const DEFAULT_SESSION_SETTINGS: SessionSettings = Object.freeze({
  require_plan: true,
  off_plan: "refuse",
  token_ttl_seconds: 60,
  trusted_servers: [],
  transitions: [],
  kill_switch: null,
  escalate_after_instructions: false,
  reads: { after_instructions: "accept" as const, tainted_arguments: "accept" as const },
  provenance: {
    track: PIECE_KINDS,
    untracked_arguments: [],
    payload_arguments: [],
    label_arguments: [],
    unknown: "accept" as const,
    named_sources: false,
    remember_hours: 24,
  },
  directories: [],
  classify: [],
});

const KEYS = new Set([
  "require_plan",
  "off_plan",
  "token_ttl_seconds",
  "trusted_servers",
  "transitions",
  "kill_switch",
  "escalate_after_instructions",
  "reads",
  "provenance",
  "directories",
  "classify",
]);

function issue(path: (string | number)[], message: string): Issue {
  return { code: "invalid_session_config", path, message: `session settings: ${message}` };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isCount(value: unknown, max: number): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= 1 && value <= max;
}

function stringList(value: unknown, path: string, issues: Issue[]): readonly string[] {
  if (Array.isArray(value) && value.every((v) => typeof v === "string" && v.length > 0 && v.length <= 1024)) {
    return value as string[];
  }
  issues.push(issue([path], `\`${path}\` must be a list of non-empty strings`));
  return [];
}

const KILL_SWITCH_KEYS = ["consequential_calls", "calls", "window_seconds"];

function readKillSwitch(value: unknown, issues: Issue[]): KillSwitchSettings | null {
  if (value === null || value === undefined) return null;
  if (isObject(value) && isCount(value["window_seconds"], 31_536_000)) {
    const consequential = value["consequential_calls"];
    const calls = value["calls"];
    const countsOk =
      (consequential === undefined || isCount(consequential, 1_000_000)) &&
      (calls === undefined || isCount(calls, 1_000_000)) &&
      (consequential !== undefined || calls !== undefined);
    if (countsOk && Object.keys(value).every((k) => KILL_SWITCH_KEYS.includes(k)))
      return {
        window_seconds: value["window_seconds"],
        ...(consequential === undefined ? {} : { consequential_calls: consequential }),
        ...(calls === undefined ? {} : { calls }),
      };
  }
  issues.push(
    issue(
      ["kill_switch"],
      "`kill_switch` must be `{consequential_calls: N, calls: M, window_seconds: S}` with positive integers (N, M or both)",
    ),
  );
  return null;
}

function readProvenance(value: unknown, issues: Issue[]): SessionSettings["provenance"] {
  if (value === undefined) return DEFAULT_SESSION_SETTINGS.provenance;
  const known = [
    "track",
    "untracked_arguments",
    "payload_arguments",
    "label_arguments",
    "unknown",
    "named_sources",
    "remember_hours",
  ];
  if (!isObject(value) || Object.keys(value).some((k) => !known.includes(k))) {
    issues.push(
      issue(
        ["provenance"],
        "`provenance` takes only `track`, `untracked_arguments`, `payload_arguments`, `label_arguments`, `unknown`, `named_sources` and `remember_hours`",
      ),
    );
    return DEFAULT_SESSION_SETTINGS.provenance;
  }
  const track = value["track"] === undefined ? PIECE_KINDS : stringList(value["track"], "provenance.track", issues);
  for (const kind of track) {
    if (!(PIECE_KINDS as readonly string[]).includes(kind)) {
      issues.push(
        issue(["provenance", "track"], `unknown piece kind ${quoteValue(kind)} (expected ${PIECE_KINDS.join(", ")})`),
      );
    }
  }
  const untracked =
    value["untracked_arguments"] === undefined
      ? []
      : stringList(value["untracked_arguments"], "provenance.untracked_arguments", issues);
  const payload =
    value["payload_arguments"] === undefined
      ? []
      : stringList(value["payload_arguments"], "provenance.payload_arguments", issues);
  const labels =
    value["label_arguments"] === undefined
      ? []
      : stringList(value["label_arguments"], "provenance.label_arguments", issues);
  const named = value["named_sources"] ?? false;
  if (typeof named !== "boolean")
    issues.push(issue(["provenance", "named_sources"], "`provenance.named_sources` must be true or false"));
  const remember = value["remember_hours"] ?? DEFAULT_SESSION_SETTINGS.provenance.remember_hours;
  if (typeof remember !== "number" || !Number.isInteger(remember) || remember < 0 || remember > MAX_REMEMBER_HOURS)
    issues.push(
      issue(
        ["provenance", "remember_hours"],
        `\`provenance.remember_hours\` must be a whole number of hours from 0 (off) to ${MAX_REMEMBER_HOURS}`,
      ),
    );
  const unknown = value["unknown"] ?? "accept";
  if (unknown !== "accept" && unknown !== "ask")
    issues.push(
      issue(
        ["provenance", "unknown"],
        `unknown \`provenance.unknown\` ${quoteValue(unknown)} (expected accept or ask)`,
      ),
    );
  return {
    track: track as PieceKind[],
    untracked_arguments: untracked,
    payload_arguments: payload,
    label_arguments: labels,
    unknown: unknown === "ask" ? "ask" : "accept",
    named_sources: named === true,
    remember_hours: typeof remember === "number" && Number.isInteger(remember) && remember >= 0 ? remember : 0,
  };
}

function readReads(value: unknown, issues: Issue[]): ReadSettings {
  const d = DEFAULT_SESSION_SETTINGS.reads;
  if (value === undefined) return d;
  const keys = ["after_instructions", "tainted_arguments"] as const;
  if (!isObject(value) || Object.keys(value).some((k) => !(keys as readonly string[]).includes(k))) {
    issues.push(issue(["reads"], "`reads` takes only `after_instructions` and `tainted_arguments` (accept or ask)"));
    return d;
  }
  const out = { ...d };
  for (const key of keys) {
    const v = value[key] ?? d[key];
    if (v !== "accept" && v !== "ask")
      issues.push(issue(["reads", key], `unknown \`reads.${key}\` ${quoteValue(v)} (expected accept or ask)`));
    else out[key] = v;
  }
  return out;
}

function readDirectories(value: unknown, issues: Issue[]): readonly DirectorySetting[] {
  if (value === undefined) return [];
  const out: DirectorySetting[] = [];
  const bad = () =>
    issues.push(issue(["directories"], "`directories` must be a list of `{tool, fields?}` (a glob and key names)"));
  if (!Array.isArray(value)) {
    bad();
    return [];
  }
  value.forEach((item: unknown, i) => {
    if (
      !isObject(item) ||
      typeof item["tool"] !== "string" ||
      Object.keys(item).some((k) => k !== "tool" && k !== "fields")
    ) {
      bad();
      return;
    }
    const compiled = compileActionPatterns([item["tool"]], ["directories", i, "tool"]);
    if (!compiled.ok) issues.push(...compiled.issues);
    if (item["fields"] === undefined) out.push({ tool: item["tool"] });
    else out.push({ tool: item["tool"], fields: stringList(item["fields"], `directories[${i}].fields`, issues) });
  });
  return out;
}

function readSimple(
  raw: Record<string, unknown>,
  issues: Issue[],
): Pick<SessionSettings, "require_plan" | "off_plan" | "token_ttl_seconds" | "escalate_after_instructions"> {
  const d = DEFAULT_SESSION_SETTINGS;
  const requirePlan = raw["require_plan"] ?? d.require_plan;
  const offPlan = raw["off_plan"] ?? d.off_plan;
  const ttl = raw["token_ttl_seconds"] ?? d.token_ttl_seconds;
  const after = raw["escalate_after_instructions"] ?? d.escalate_after_instructions;
  if (typeof requirePlan !== "boolean") issues.push(issue(["require_plan"], "`require_plan` must be true or false"));
  if (offPlan !== "refuse" && offPlan !== "ask")
    issues.push(issue(["off_plan"], `unknown \`off_plan\` ${quoteValue(offPlan)} (expected refuse or ask)`));
  if (!isCount(ttl, 86_400))
    issues.push(issue(["token_ttl_seconds"], "`token_ttl_seconds` must be an integer from 1 to 86400"));
  if (typeof after !== "boolean")
    issues.push(issue(["escalate_after_instructions"], "`escalate_after_instructions` must be true or false"));
  return {
    require_plan: requirePlan === true,
    off_plan: offPlan === "ask" ? "ask" : "refuse",
    token_ttl_seconds: typeof ttl === "number" ? ttl : d.token_ttl_seconds,
    escalate_after_instructions: after === true,
  };
}

function isOverride(value: unknown): value is ClassificationOverride {
  if (!isObject(value) || typeof value["tool"] !== "string") return false;
  if (Object.keys(value).some((k) => !["tool", "server", "category", "risk_level"].includes(k))) return false;
  if (value["server"] !== undefined && typeof value["server"] !== "string") return false;
  if (value["category"] !== undefined && !(CATEGORIES as readonly unknown[]).includes(value["category"])) return false;
  return value["risk_level"] === undefined || (RISK_LEVELS as readonly unknown[]).includes(value["risk_level"]);
}

function readClassify(value: unknown, issues: Issue[]): readonly ClassificationOverride[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || !value.every(isOverride)) {
    issues.push(issue(["classify"], "`classify` must be a list of `{tool, server?, category?, risk_level?}`"));
    return [];
  }
  try {
    compileClassificationOverrides(value);
  } catch (err) {
    issues.push(issue(["classify"], err instanceof Error ? err.message : "bad override"));
  }
  return value;
}

/** Parses (untrusted) session settings, filling defaults; unknown keys and bad values are issues. */
export function parseSessionSettings(value: unknown): Result<SessionSettings> {
  if (value === undefined || value === null) return { ok: true, value: DEFAULT_SESSION_SETTINGS };
  if (!isObject(value)) return { ok: false, issues: [issue([], "settings must be an object")] };
  const issues: Issue[] = [];
  for (const key of Object.keys(value)) {
    if (KEYS.has(key)) continue;
    const near = suggest(key, [...KEYS]);
    issues.push(
      issue([key], `unknown key ${quoteValue(key)}${near !== undefined ? ` (did you mean \`${near}\`?)` : ""}`),
    );
  }
  const simple = readSimple(value, issues);
  const trusted =
    value["trusted_servers"] === undefined ? [] : stringList(value["trusted_servers"], "trusted_servers", issues);
  const compiled = compileActionPatterns(trusted, ["trusted_servers"]);
  if (!compiled.ok) issues.push(...compiled.issues);
  const transitions = parseTransitionRules(value["transitions"]);
  if (!transitions.ok) issues.push(...transitions.issues);
  const classify = readClassify(value["classify"], issues);
  const settings: SessionSettings = {
    ...simple,
    trusted_servers: trusted,
    transitions: transitions.ok ? transitions.value : [],
    kill_switch: readKillSwitch(value["kill_switch"], issues),
    reads: readReads(value["reads"], issues),
    provenance: readProvenance(value["provenance"], issues),
    directories: readDirectories(value["directories"], issues),
    classify,
  };
  return issues.length > 0 ? { ok: false, issues } : { ok: true, value: settings };
}

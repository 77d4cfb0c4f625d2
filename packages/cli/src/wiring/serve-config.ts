/**
 * The `serve:` and `storage:` sections of config.yml, checked the one way `acp serve` and `acp doctor`
 * both use: every key known, every value of the right kind. (The storage URL itself is checked where it
 * is opened, with the same words whether it came from the flag, the environment or this file.)
 */
import { compileGlob, readNamedSecrets, suggest } from "@acp/core";
import { AGENT_TOKEN_NAME, parsePublicUrl } from "@acp/proxy/http-rules";
import { CliError, EXIT } from "../exit-codes.js";

/** The keys of `serve:` and what each takes. */
export const SERVE_KEYS = [
  "port",
  "bind",
  "public_url",
  "insecure_plain_http",
  "bearer_token",
  "approver_token",
  "agent_tokens",
  "agent_servers",
  "approver_tokens",
  "decision_audit",
  "caller_budget",
  "pending_per_caller",
  "trusted_channel_keys",
] as const;
/** The keys of `serve.caller_budget`: each caller's share of the policy work. */
const CALLER_BUDGET_KEYS = ["units", "seconds"] as const;
/** The keys of `storage:`. */
export const STORAGE_KEYS = ["url", "connect_wait"] as const;

/** The sections as `acp serve` uses them (absent keys stay absent). */
export interface ServeConfig {
  readonly port?: number;
  readonly bind?: string;
  /** The origin a reverse proxy in front serves it at (checked with `parsePublicUrl`). */
  readonly publicUrl?: string;
  /** `serve.insecure_plain_http: true`, as `--insecure-plain-http`: plain HTTP beyond loopback, the risk accepted. */
  readonly insecurePlainHttp?: boolean;
  readonly decisionAudit?: "queued" | "durable";
  /** Each caller's share of the policy work (`serve.caller_budget`): units spent at once, back over windowMs. */
  readonly callerBudget?: { readonly units?: number; readonly windowMs?: number };
  /** `serve.pending_per_caller`: consent requests one caller may have waiting at once (`--pending-per-caller`). */
  readonly pendingPerCaller?: number;
  /** The sealed secret's text as written (`acp config set-secret serve.bearer_token`). */
  readonly bearerToken?: string;
  /** The approvers' token, sealed the same way (`acp config set-secret serve.approver_token`). */
  readonly approverToken?: string;
  /** Agents' tokens that name their agent, each sealed (`acp config set-secret serve.agent_tokens.NAME`). */
  readonly agentTokens?: Readonly<Record<string, string>>;
  /** Approvers' tokens that name their approver, each sealed (`serve.approver_tokens.NAME`). */
  readonly approverTokens?: Readonly<Record<string, string>>;
  /** The servers a named agent may decide for (`serve.agent_servers.NAME`: server names or globs). */
  readonly agentServers?: Readonly<Record<string, readonly string[]>>;
  /** Trusted-channel keys by key id, each sealed (`acp config set-secret serve.trusted_channel_keys.KEY_ID`). */
  readonly trustedChannelKeys?: Readonly<Record<string, string>>;
  readonly storageUrl?: string;
  /** `storage.connect_wait`: seconds a node waits at start for a PostgreSQL not accepting connections yet. */
  readonly storageConnectWait?: number;
}

/** The checked sections, or every problem (`serve.KEY: …`, `storage.KEY: …`). */
export type ServeConfigCheck =
  { readonly ok: true; readonly value: ServeConfig } | { readonly ok: false; readonly problems: readonly string[] };

function isMap(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function shown(value: unknown): string {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}

/**
 * `serve.agent_servers`: NAME → a list of server names or globs, NAME one of `serve.agent_tokens` (a scope
 * for a token nobody holds would hold nothing, and a typo would leave the agent unscoped).
 */
function readAgentServers(
  raw: unknown,
  agentTokens: Readonly<Record<string, string>> | undefined,
  problems: string[],
): Record<string, readonly string[]> | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!isMap(raw)) {
    problems.push("serve.agent_servers: must be a mapping of agent names to lists of servers (names or globs)");
    return undefined;
  }
  const out: Record<string, readonly string[]> = {};
  for (const [name, servers] of Object.entries(raw)) {
    if (agentTokens === undefined || !Object.hasOwn(agentTokens, name)) {
      problems.push(`serve.agent_servers.${name}: no agent of serve.agent_tokens is named \`${shown(name)}\``);
      continue;
    }
    const list = typeof servers === "string" ? [servers] : servers;
    if (!Array.isArray(list) || list.length === 0 || !list.every((s) => typeof s === "string" && s !== "")) {
      problems.push(`serve.agent_servers.${name}: must be a server name or glob, or a list of them`);
      continue;
    }
    const invalid = (list as string[]).find((pattern) => !compileGlob(pattern).ok);
    if (invalid !== undefined) {
      problems.push(`serve.agent_servers.${name}: \`${shown(invalid)}\` is not a server name or glob`);
      continue;
    }
    out[name] = list as string[];
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The waiting consent requests of all callers together (`acp serve`'s limit): the most one caller's share may be. */
export const MAX_PENDING = 1000;

/** A share of the waiting consent requests, `1` to {@link MAX_PENDING}, or undefined when `raw` is not one. */
function readPendingShare(raw: unknown): number | undefined {
  const n = typeof raw === "string" && /^[0-9]{1,5}$/.test(raw.trim()) ? Number(raw.trim()) : raw;
  return typeof n === "number" && Number.isSafeInteger(n) && n >= 1 && n <= MAX_PENDING ? n : undefined;
}

const PENDING_SHARE_WORDS = `a whole number of consent requests from 1 to ${MAX_PENDING}`;

/**
 * The share of the waiting consent requests each caller may hold (the agent a token names; every caller
 * whose token names none, together), as the service option: `--pending-per-caller` (exit 2 when it is not a
 * number of requests), else `serve.pending_per_caller`, else none (the service's default, a quarter of
 * {@link MAX_PENDING}).
 */
export function pendingShareOf(flag: string | undefined, config: ServeConfig): { maxPendingPerCaller?: number } {
  const n = flag === undefined ? config.pendingPerCaller : readPendingShare(flag);
  if (flag !== undefined && n === undefined) {
    throw new CliError(`--pending-per-caller: \`${flag}\` is not ${PENDING_SHARE_WORDS}`, EXIT.usage);
  }
  return n === undefined ? {} : { maxPendingPerCaller: n };
}

/** Most a `serve.caller_budget` number may be: units up to 2^50, seconds up to a day. */
const CALLER_BUDGET_MAX = { units: 2 ** 50, seconds: 86_400 } as const;

/**
 * `serve.caller_budget`: `units` (work units one caller may spend at once) and `seconds` (over how long they
 * come back), each a positive whole number; either may be left out for its default.
 */
function readCallerBudget(raw: unknown, problems: string[]): { units?: number; windowMs?: number } | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!isMap(raw)) {
    problems.push(`serve.caller_budget: must be a mapping (of ${CALLER_BUDGET_KEYS.join(", ")})`);
    return undefined;
  }
  const out: { units?: number; windowMs?: number } = {};
  for (const [key, value] of Object.entries(raw)) {
    if (key !== "units" && key !== "seconds") {
      const near = suggest(key, CALLER_BUDGET_KEYS);
      const help = near !== undefined ? `did you mean \`serve.caller_budget.${near}\`?` : "takes units, seconds";
      problems.push(`serve.caller_budget.${key}: unknown key (${help})`);
      continue;
    }
    const max = CALLER_BUDGET_MAX[key];
    const n = typeof value === "string" && /^[0-9]{1,16}$/.test(value) ? Number(value) : value;
    if (typeof n !== "number" || !Number.isSafeInteger(n) || n < 1 || n > max) {
      const what = key === "units" ? "work units" : "seconds";
      problems.push(
        `serve.caller_budget.${key}: \`${shown(value)}\` is not a number of ${what} (a whole number from 1 to ${max.toLocaleString("en-US")})`,
      );
      continue;
    }
    if (key === "units") out.units = n;
    else out.windowMs = n * 1000;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** Checks the `serve:` and `storage:` sections of a config file's plain values (`{}` without a file). */
export function checkServeConfig(values: Readonly<Record<string, unknown>>): ServeConfigCheck {
  const problems: string[] = [];
  const section = (name: string, keys: readonly string[]): Record<string, unknown> => {
    const raw = values[name];
    if (raw === undefined || raw === null) return {};
    if (!isMap(raw)) {
      problems.push(`${name}: must be a mapping (of ${keys.join(", ")})`);
      return {};
    }
    for (const key of Object.keys(raw)) {
      if (keys.includes(key)) continue;
      // the closest key, as every other section of config.yml says it (core's `suggest`)
      const near = suggest(key, keys);
      const help = near !== undefined ? `did you mean \`${name}.${near}\`?` : `${name}: takes ${keys.join(", ")}`;
      problems.push(`${name}.${key}: unknown key (${help})`);
    }
    return raw;
  };
  const serve = section("serve", SERVE_KEYS);
  const storage = section("storage", STORAGE_KEYS);
  const config: {
    port?: number;
    bind?: string;
    publicUrl?: string;
    insecurePlainHttp?: boolean;
    decisionAudit?: "queued" | "durable";
    callerBudget?: { units?: number; windowMs?: number };
    pendingPerCaller?: number;
    bearerToken?: string;
    approverToken?: string;
    agentTokens?: Record<string, string>;
    approverTokens?: Record<string, string>;
    trustedChannelKeys?: Record<string, string>;
    agentServers?: Record<string, readonly string[]>;
    storageUrl?: string;
    storageConnectWait?: number;
  } = {};
  const port = serve["port"];
  if (port !== undefined && port !== null) {
    const n = typeof port === "string" && /^[0-9]{1,5}$/.test(port) ? Number(port) : port;
    if (typeof n === "number" && Number.isInteger(n) && n >= 0 && n <= 65535) config.port = n;
    else problems.push(`serve.port: \`${shown(port)}\` is not a port (0 to 65535; 0 picks a free one)`);
  }
  const bind = serve["bind"];
  if (bind !== undefined && bind !== null) {
    if (typeof bind === "string" && bind.trim() !== "") config.bind = bind;
    else problems.push(`serve.bind: \`${shown(bind)}\` is not an address (e.g. 127.0.0.1, 0.0.0.0, ::1)`);
  }
  const publicUrl = serve["public_url"];
  if (publicUrl !== undefined && publicUrl !== null && publicUrl !== "") {
    const parsed = typeof publicUrl === "string" ? parsePublicUrl(publicUrl) : null;
    if (parsed?.ok === true) config.publicUrl = parsed.value.origin;
    else problems.push(`serve.public_url: ${parsed?.message ?? "must be a URL (like https://acp.example.com)"}`);
  }
  const insecure = serve["insecure_plain_http"];
  if (insecure !== undefined && insecure !== null) {
    if (typeof insecure === "boolean") config.insecurePlainHttp = insecure;
    else problems.push(`serve.insecure_plain_http: \`${shown(insecure)}\` is not true or false`);
  }
  const audit = serve["decision_audit"];
  if (audit !== undefined && audit !== null) {
    if (audit === "queued" || audit === "durable") config.decisionAudit = audit;
    else problems.push(`serve.decision_audit: unknown value \`${shown(audit)}\` (expected queued or durable)`);
  }
  const callerBudget = readCallerBudget(serve["caller_budget"], problems);
  if (callerBudget !== undefined) config.callerBudget = callerBudget;
  const share = serve["pending_per_caller"];
  if (share !== undefined && share !== null) {
    const n = readPendingShare(share);
    if (n !== undefined) config.pendingPerCaller = n;
    else problems.push(`serve.pending_per_caller: \`${shown(share)}\` is not ${PENDING_SHARE_WORDS}`);
  }
  // a token's value is a secret: never shown
  const sealed = (key: "bearer_token" | "approver_token"): string | undefined => {
    const value = serve[key];
    if (value === undefined || value === null || value === "") return undefined;
    if (typeof value === "string") return value;
    problems.push(`serve.${key}: must be the sealed text \`acp config set-secret serve.${key}\` writes`);
    return undefined;
  };
  const bearerToken = sealed("bearer_token");
  if (bearerToken !== undefined) config.bearerToken = bearerToken;
  const approverToken = sealed("approver_token");
  if (approverToken !== undefined) config.approverToken = approverToken;
  // NAME → sealed token maps, whose values are secrets: never shown
  const namedTokens = (
    key: "agent_tokens" | "approver_tokens" | "trusted_channel_keys",
    who: "agent" | "approver" | "key",
  ) => {
    const read = readNamedSecrets(serve[key], `serve.${key}`, who, AGENT_TOKEN_NAME);
    problems.push(...read.problems.map((p) => p.message));
    return Object.keys(read.sealed).length > 0 ? { ...read.sealed } : undefined;
  };
  const agentTokens = namedTokens("agent_tokens", "agent");
  if (agentTokens !== undefined) config.agentTokens = agentTokens;
  const approverTokens = namedTokens("approver_tokens", "approver");
  if (approverTokens !== undefined) config.approverTokens = approverTokens;
  const trustedChannelKeys = namedTokens("trusted_channel_keys", "key");
  if (trustedChannelKeys !== undefined) config.trustedChannelKeys = trustedChannelKeys;
  const agentServers = readAgentServers(serve["agent_servers"], agentTokens, problems);
  if (agentServers !== undefined) config.agentServers = agentServers;
  const url = storage["url"];
  if (url !== undefined && url !== null) {
    // a URL may hold a password: never shown here
    if (typeof url === "string") {
      if (url !== "") config.storageUrl = url;
    } else problems.push("storage.url: must be a postgres://… URL (a string)");
  }
  const wait = storage["connect_wait"];
  if (wait !== undefined && wait !== null) {
    if (typeof wait === "number" && Number.isFinite(wait) && wait >= 0 && wait <= 3600)
      config.storageConnectWait = wait;
    else
      problems.push(
        `storage.connect_wait: \`${shown(wait)}\` is not a number of seconds from 0 to 3600 (0: do not wait)`,
      );
  }
  return problems.length === 0 ? { ok: true, value: config } : { ok: false, problems };
}

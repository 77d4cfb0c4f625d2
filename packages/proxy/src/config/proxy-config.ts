import { fail, isSealedSecret, ok, readNamedSecrets, suggest, type Issue, type Result } from "@acp/core";
import { AGENT_TOKEN_NAME } from "../downstream/bearer-auth.js";
import { parsePublicUrl, type PublicUrl } from "../downstream/public-url.js";
import { parseUpstreamUrl, splitCommandLine, UPSTREAM_NAME, type UpstreamSpec } from "../upstream/upstream-spec.js";

/** When tool (and prompt) names get the `server__` prefix. */
export type PrefixMode = "on-collision" | "always" | "never";

/** The `proxy:` section of `config.yml`, validated. */
export interface ProxyConfig {
  /** HTTP port for the downstream HTTP transport (absent: stdio). */
  readonly port?: number;
  /** Address the HTTP transport binds to; default 127.0.0.1. */
  readonly bind: string;
  /** The token every client may use, when given plain; required (or a sealed one) when `bind` is not loopback. */
  readonly bearerToken?: string;
  /** `bearer_token` is sealed (`acp config set-secret proxy.bearer_token`): the command opens it with the home's key. */
  readonly bearerTokenSealed?: boolean;
  /** The agents with a sealed token of their own (`proxy.agent_tokens.NAME`), opened by the command. */
  readonly agentTokenNames?: readonly string[];
  /** The origin a reverse proxy in front serves the HTTP transport at (`proxy.public_url`). */
  readonly publicUrl?: PublicUrl;
  /**
   * `proxy.insecure_plain_http: true`, as `--insecure-plain-http`: the HTTP transport may listen beyond loopback
   * with no TLS in front (tokens and calls in clear text, on a network the operator trusts).
   */
  readonly insecurePlainHttp?: boolean;
  readonly upstreams: readonly UpstreamSpec[];
  readonly prefixTools: PrefixMode;
  /** Upper bound on one upstream call, in milliseconds (progress resets it). */
  readonly callTimeoutMs: number;
  /** Upper bound on one upstream call however much progress it sends, in milliseconds (`call_max_seconds`). */
  readonly callMaxMs: number;
  /**
   * How long the proxy waits for every upstream before it serves the ones up (`start_wait_seconds`), ms: one
   * slow or hanging server's start does not hold back the others, nor the client's `initialize`.
   */
  readonly startWaitMs: number;
  /** Start again an upstream that stopped after it was up (`restart_upstreams`, default true). */
  readonly restartUpstreams: boolean;
  /** Consent wait when the deciding rule names no timeout, in milliseconds. */
  readonly consentTimeoutMs: number;
  /** Most HTTP sessions open at once (`proxy.max_sessions`); absent: the listener's default (256). */
  readonly maxSessions?: number;
  /**
   * Each agent's share of the policy work (`proxy.caller_budget`: `units` spent at once, back over
   * `seconds`, as `windowMs`); absent, or a key of it absent: the default (core's `createCallerBudget`).
   */
  readonly callerBudget?: { readonly units?: number; readonly windowMs?: number };
  /** Most `tools/call`s of one session in flight at once, decided or forwarded (`proxy.max_calls_in_flight`). */
  readonly maxCallsInFlight?: number;
}

/** Defaults of the proxy section. */
export const PROXY_DEFAULTS = {
  bind: "127.0.0.1",
  prefixTools: "on-collision" as PrefixMode,
  callTimeoutMs: 60_000,
  callMaxMs: 3_600_000,
  startWaitMs: 10_000,
  consentTimeoutMs: 120_000,
  maxCallsInFlight: 64,
} as const;

/** The restart backoff of `restart_upstreams: true`: 1 s, doubling up to a minute. */
export const UPSTREAM_RESTART = { firstDelayMs: 1_000, maxDelayMs: 60_000 } as const;

/** The keys of `proxy:` (anything else is refused, `proxy_config_unknown_key`). */
export const PROXY_KEYS: readonly string[] = [
  "port",
  "bind",
  "public_url",
  "insecure_plain_http",
  "bearer_token",
  "agent_tokens",
  "upstream_servers",
  "prefix_tools",
  "call_timeout_seconds",
  "call_max_seconds",
  "start_wait_seconds",
  "restart_upstreams",
  "max_sessions",
  "caller_budget",
  "max_calls_in_flight",
];
const CALLER_BUDGET_KEYS = ["units", "seconds"];
/** Most a `proxy.caller_budget` number may be (as `serve.caller_budget`): units 2^50, seconds a day. */
const CALLER_BUDGET_MAX: Readonly<Record<string, number>> = { units: 2 ** 50, seconds: 86_400 };
const UPSTREAM_KEYS = ["name", "command", "args", "url", "transport", "env", "cwd", "trusted"];

/** The issue codes of this file (listed in docs/reference/errors.md). */
const INVALID = { code: "proxy_config_invalid" } as const;
const UNKNOWN_KEY = { code: "proxy_config_unknown_key" } as const;
const NAME_DUPLICATE = { code: "proxy_upstream_name_duplicate" } as const;
const NAME_INVALID = { code: "proxy_upstream_name_invalid" } as const;
const URL_INVALID = { code: "proxy_upstream_url_invalid" } as const;
const COMMAND_INVALID = { code: "proxy_upstream_command_invalid" } as const;
type Code = { readonly code: string };

/** Highest `proxy.max_sessions` taken. */
const MAX_SESSIONS_LIMIT = 100_000;
/** Highest `proxy.max_calls_in_flight` taken. */
const MAX_CALLS_IN_FLIGHT_LIMIT = 100_000;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** ` (did you mean \`x\`?)` for the closest known key (core's `suggest`, as config.yml's other sections), or "". */
function didYouMean(key: string, known: readonly string[]): string {
  const near = suggest(key, known);
  return near === undefined ? "" : ` (did you mean \`${near}\`?)`;
}

/**
 * Validates the `proxy:` section of `config.yml` (and `defaults.timeout_seconds`, passed separately).
 * Unknown keys are refused; every problem is reported at once.
 */
export function parseProxyConfig(section: unknown, defaultsTimeoutSeconds?: unknown): Result<ProxyConfig> {
  const issues: Issue[] = [];
  const at = (path: (string | number)[], code: Code, message: string): void => {
    issues.push({ code: code.code, path: ["proxy", ...path], message });
  };
  const s: Obj = section === undefined || section === null ? {} : isObj(section) ? section : {};
  if (section !== undefined && section !== null && !isObj(section)) {
    at([], INVALID, "`proxy` must be a mapping");
  }
  for (const key of Object.keys(s)) {
    if (!PROXY_KEYS.includes(key))
      at([key], UNKNOWN_KEY, `unknown key \`${key}\` in \`proxy\`${didYouMean(key, PROXY_KEYS)}`);
  }
  const port = s["port"];
  if (port !== undefined && !(Number.isInteger(port) && (port as number) >= 0 && (port as number) <= 65535)) {
    at(["port"], INVALID, "`proxy.port` must be an integer from 0 to 65535");
  }
  const bind = s["bind"] ?? PROXY_DEFAULTS.bind;
  if (typeof bind !== "string" || bind === "") at(["bind"], INVALID, "`proxy.bind` must be an address");
  const given = s["bearer_token"];
  const sealed = isSealedSecret(given);
  const token = sealed || given === null || given === "" ? undefined : given;
  if (token !== undefined && (typeof token !== "string" || token.length < 16)) {
    at(["bearer_token"], INVALID, "`proxy.bearer_token` must be a string of at least 16 characters");
  } else if (typeof token === "string" && !/^[A-Za-z0-9\-._~+/]+=*$/.test(token)) {
    at(
      ["bearer_token"],
      INVALID,
      "`proxy.bearer_token` has characters a client cannot send in `Authorization: Bearer …` (use letters, digits and -._~+/)",
    );
  }
  const agentTokenNames = parseAgentTokens(s["agent_tokens"], at);
  const publicText = s["public_url"];
  let publicUrl: PublicUrl | undefined;
  if (publicText !== undefined && publicText !== null && publicText !== "") {
    const parsed = typeof publicText === "string" ? parsePublicUrl(publicText) : null;
    if (parsed?.ok === true) publicUrl = parsed.value;
    else
      at(
        ["public_url"],
        INVALID,
        `\`proxy.public_url\`: ${parsed?.message ?? "must be a URL (like https://mcp.example.com)"}`,
      );
  }
  const insecurePlainHttp = s["insecure_plain_http"];
  if (insecurePlainHttp !== undefined && insecurePlainHttp !== null && typeof insecurePlainHttp !== "boolean") {
    at(["insecure_plain_http"], INVALID, "`proxy.insecure_plain_http` must be true or false");
  }
  const prefix = s["prefix_tools"] ?? PROXY_DEFAULTS.prefixTools;
  if (prefix !== "on-collision" && prefix !== "always" && prefix !== "never") {
    at(["prefix_tools"], INVALID, `\`proxy.prefix_tools\` must be on-collision, always or never`);
  }
  const callTimeout = positiveSeconds(s["call_timeout_seconds"], ["call_timeout_seconds"], at);
  const callMax = positiveSeconds(s["call_max_seconds"], ["call_max_seconds"], at);
  if (callMax !== undefined && callMax < (callTimeout ?? PROXY_DEFAULTS.callTimeoutMs)) {
    at(["call_max_seconds"], INVALID, "`proxy.call_max_seconds` must be at least `proxy.call_timeout_seconds`");
  }
  const startWait = positiveSeconds(s["start_wait_seconds"], ["start_wait_seconds"], at);
  const restart = s["restart_upstreams"];
  if (restart !== undefined && typeof restart !== "boolean") {
    at(["restart_upstreams"], INVALID, "`proxy.restart_upstreams` must be true or false");
  }
  const consentTimeout = positiveSeconds(defaultsTimeoutSeconds, ["..", "defaults", "timeout_seconds"], at);
  const upstreams = parseUpstreamList(s["upstream_servers"], at);
  const maxSessions = s["max_sessions"];
  if (
    maxSessions !== undefined &&
    !(Number.isInteger(maxSessions) && (maxSessions as number) >= 1 && (maxSessions as number) <= MAX_SESSIONS_LIMIT)
  ) {
    at(["max_sessions"], INVALID, `\`proxy.max_sessions\` must be an integer from 1 to ${MAX_SESSIONS_LIMIT}`);
  }
  const callerBudget = parseCallerBudget(s["caller_budget"], at);
  const maxCalls = s["max_calls_in_flight"];
  if (
    maxCalls !== undefined &&
    !(Number.isInteger(maxCalls) && (maxCalls as number) >= 1 && (maxCalls as number) <= MAX_CALLS_IN_FLIGHT_LIMIT)
  ) {
    at(
      ["max_calls_in_flight"],
      INVALID,
      `\`proxy.max_calls_in_flight\` must be a whole number from 1 to ${MAX_CALLS_IN_FLIGHT_LIMIT.toLocaleString("en-US")}`,
    );
  }
  if (issues.length > 0) return fail(issues);
  return ok({
    ...(typeof port === "number" ? { port } : {}),
    bind: bind as string,
    ...(typeof token === "string" ? { bearerToken: token } : {}),
    ...(sealed ? { bearerTokenSealed: true } : {}),
    ...(agentTokenNames.length > 0 ? { agentTokenNames } : {}),
    ...(publicUrl !== undefined ? { publicUrl } : {}),
    ...(insecurePlainHttp === true ? { insecurePlainHttp: true } : {}),
    upstreams,
    prefixTools: prefix as PrefixMode,
    callTimeoutMs: callTimeout ?? PROXY_DEFAULTS.callTimeoutMs,
    callMaxMs: callMax ?? Math.max(PROXY_DEFAULTS.callMaxMs, callTimeout ?? 0),
    startWaitMs: startWait ?? PROXY_DEFAULTS.startWaitMs,
    restartUpstreams: restart !== false,
    consentTimeoutMs: consentTimeout ?? PROXY_DEFAULTS.consentTimeoutMs,
    ...(typeof maxSessions === "number" ? { maxSessions } : {}),
    ...(callerBudget !== undefined ? { callerBudget } : {}),
    ...(typeof maxCalls === "number" ? { maxCallsInFlight: maxCalls } : {}),
  });
}

/** `proxy.caller_budget`: `units` and `seconds`, each a whole number from 1 to its most; either may be left out. */
function parseCallerBudget(
  value: unknown,
  at: (path: (string | number)[], code: Code, message: string) => void,
): { units?: number; windowMs?: number } | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isObj(value)) {
    at(["caller_budget"], INVALID, "`proxy.caller_budget` must be a mapping (of units, seconds)");
    return undefined;
  }
  const out: { units?: number; windowMs?: number } = {};
  for (const [key, n] of Object.entries(value)) {
    const max = CALLER_BUDGET_MAX[key];
    if (max === undefined) {
      const message = `unknown key \`${key}\` in \`proxy.caller_budget\`${didYouMean(key, CALLER_BUDGET_KEYS)}`;
      at(["caller_budget", key], UNKNOWN_KEY, message);
      continue;
    }
    if (typeof n !== "number" || !Number.isSafeInteger(n) || n < 1 || n > max) {
      const what = key === "units" ? "work units" : "seconds";
      const most = max.toLocaleString("en-US");
      at(
        ["caller_budget", key],
        INVALID,
        `\`proxy.caller_budget.${key}\` must be a whole number of ${what} from 1 to ${most}`,
      );
      continue;
    }
    if (key === "units") out.units = n;
    else out.windowMs = n * 1000;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/**
 * `proxy.agent_tokens`: agent name → sealed token (`acp config set-secret proxy.agent_tokens.NAME`). A
 * token's value is a secret: never shown. An empty value is a name not given a token yet.
 */
function parseAgentTokens(
  value: unknown,
  at: (path: (string | number)[], code: Code, message: string) => void,
): string[] {
  const read = readNamedSecrets(value, "proxy.agent_tokens", "agent", AGENT_TOKEN_NAME);
  for (const problem of read.problems) at(["agent_tokens", ...problem.path], INVALID, problem.message);
  return Object.keys(read.sealed);
}

function positiveSeconds(
  value: unknown,
  path: string[],
  at: (path: (string | number)[], code: Code, message: string) => void,
): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !(value > 0) || !Number.isFinite(value)) {
    const key = path[0] === ".." ? path.slice(1).join(".") : `proxy.${path.join(".")}`;
    at(path, INVALID, `\`${key}\` must be a positive number of seconds`);
    return undefined;
  }
  return Math.round(value * 1000);
}

function parseUpstreamList(
  value: unknown,
  at: (path: (string | number)[], code: Code, message: string) => void,
): UpstreamSpec[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    at(["upstream_servers"], INVALID, "`proxy.upstream_servers` must be a list");
    return [];
  }
  const specs: UpstreamSpec[] = [];
  const seen = new Set<string>();
  value.forEach((entry: unknown, index) => {
    const spec = parseUpstreamEntry(entry, ["upstream_servers", index], at);
    if (spec === undefined) return;
    if (seen.has(spec.name)) {
      at(["upstream_servers", index, "name"], NAME_DUPLICATE, `upstream name \`${spec.name}\` is used twice`);
      return;
    }
    seen.add(spec.name);
    specs.push(spec);
  });
  return specs;
}

function parseUpstreamEntry(
  entry: unknown,
  path: (string | number)[],
  at: (path: (string | number)[], code: Code, message: string) => void,
): UpstreamSpec | undefined {
  if (!isObj(entry)) {
    at(path, INVALID, "each upstream server must be a mapping with `name` and `command` or `url`");
    return undefined;
  }
  for (const key of Object.keys(entry)) {
    if (!UPSTREAM_KEYS.includes(key))
      at([...path, key], UNKNOWN_KEY, `unknown key \`${key}\` in upstream server${didYouMean(key, UPSTREAM_KEYS)}`);
  }
  const name = entry["name"];
  if (typeof name !== "string" || !UPSTREAM_NAME.test(name)) {
    at([...path, "name"], NAME_INVALID, `upstream name must be letters, digits, \`-\` and \`_\` (at most 64)`);
    return undefined;
  }
  const trusted = entry["trusted"];
  if (trusted !== undefined && typeof trusted !== "boolean")
    at([...path, "trusted"], INVALID, "`trusted` must be true or false");
  const trust = trusted === true ? { trusted: true } : {};
  const { command, url, transport } = entry;
  if ((command === undefined) === (url === undefined)) {
    at(path, INVALID, `upstream \`${name}\` needs exactly one of \`command\` or \`url\``);
    return undefined;
  }
  if (url !== undefined) {
    if (transport !== undefined && transport !== "streamable-http" && transport !== "sse") {
      at([...path, "transport"], INVALID, `upstream \`${name}\`: a url takes transport streamable-http or sse`);
      return undefined;
    }
    const parsed = typeof url === "string" ? parseUpstreamUrl(url, name, transport) : undefined;
    if (parsed === undefined || !parsed.ok) {
      const credentials = parsed !== undefined && parsed.issues[0]?.message.includes("carries a user or password");
      at(
        [...path, "url"],
        URL_INVALID,
        credentials === true
          ? `upstream \`${name}\`: ${parsed?.issues[0]?.message ?? ""}`
          : `upstream \`${name}\`: \`url\` must be an http or https url`,
      );
      return undefined;
    }
    return { ...parsed.value, ...trust };
  }
  return parseCommandEntry(entry, name, path, trust, at);
}

function parseCommandEntry(
  entry: Obj,
  name: string,
  path: (string | number)[],
  trust: { trusted?: boolean },
  at: (path: (string | number)[], code: Code, message: string) => void,
): UpstreamSpec | undefined {
  const { command, args, env, cwd, transport } = entry;
  if (transport !== undefined && transport !== "stdio") {
    at([...path, "transport"], INVALID, `upstream \`${name}\`: a command takes transport stdio`);
  }
  const words = typeof command === "string" ? splitCommandLine(command) : undefined;
  if (words === undefined || !words.ok) {
    const message = words !== undefined && !words.ok ? (words.issues[0]?.message ?? "") : "`command` must be a string";
    at([...path, "command"], COMMAND_INVALID, `upstream \`${name}\`: ${message}`);
    return undefined;
  }
  if (args !== undefined && !(Array.isArray(args) && args.every((a) => typeof a === "string"))) {
    at([...path, "args"], INVALID, `upstream \`${name}\`: \`args\` must be a list of strings`);
    return undefined;
  }
  if (env !== undefined && !(isObj(env) && Object.values(env).every((v) => typeof v === "string"))) {
    at([...path, "env"], INVALID, `upstream \`${name}\`: \`env\` must map names to strings`);
    return undefined;
  }
  if (cwd !== undefined && typeof cwd !== "string") at([...path, "cwd"], INVALID, "`cwd` must be a path");
  const [program, ...rest] = words.value;
  return {
    name,
    transport: "stdio",
    command: program ?? "",
    args: [...rest, ...(args ?? [])],
    ...(env !== undefined ? { env: env as Record<string, string> } : {}),
    ...(typeof cwd === "string" ? { cwd } : {}),
    ...trust,
  };
}

import { join } from "node:path";
import type { RedactionRules } from "@acp/core";
import { parseProxyConfig, type ProxyConfig } from "@acp/proxy/config";
import {
  formatMemorySize,
  MAX_MAX_CPU,
  MIN_MAX_CPU,
  MIN_MAX_MEMORY,
  parseCpuCount,
  parseEgressAllowList,
  parseMemorySize,
} from "@acp/proxy/sandbox";
import { CliError, EXIT } from "../exit-codes.js";
import { graphConfigFrom, type GraphConfig } from "../decision/graph-config.js";
import { credentialProblems, credentialRulesFrom, type CredentialRule } from "./credentials.js";
import { redactionRulesFrom } from "./redaction-config.js";
import { checkSessionBlock } from "./session-config.js";
import { checkChannelKeys } from "./config-channels.js";
import { readConfigFile, unknownKeyProblem, whereIn, type ConfigFile } from "./config-file.js";

/**
 * The config keys `acp proxy` and `acp run` take from the config file in use, each checked: `proxy:` (with
 * `defaults.timeout_seconds`), the `redaction:` patterns, the `credentials:` mapping, the `session:` block,
 * the consent graph's `graph:` section, and the consent channel (`channel:`, `telegram:`, `webhook:`; its
 * sealed secrets are opened on first use with the home's key); any other top-level key than `TOP_LEVEL_KEYS`
 * and a `version` other than "1" are refused. Secret values stay in the home's vault and in
 * the sealed values of this file. `acp doctor` runs the same checks.
 */
export interface ConfigInUse {
  readonly file: ConfigFile;
  /** `proxy:` and `defaults.timeout_seconds`: upstreams, port, bind, token, prefixes, timeouts. */
  readonly proxy: ProxyConfig;
  readonly redaction: RedactionRules;
  readonly credentials: readonly CredentialRule[];
  /** The `session:` block as given (`{}`: the runtime's defaults). */
  readonly session: Readonly<Record<string, unknown>>;
  /** The `graph:` section: the mapping and threshold for the home's consent graph (`{}`: none). */
  readonly graph: GraphConfig;
}

/** The keys `configInUse` checks, in the order its problems are reported (what `acp doctor` names its checks). */
export const CONFIG_KEYS = ["proxy", "credentials", "redaction", "session", "graph", "channel"] as const;
export type ConfigKey = (typeof CONFIG_KEYS)[number];

/**
 * Every top-level key any command reads from `config.yml`: the proxy's (`CONFIG_KEYS`, `defaults`,
 * `telegram`, `webhook`), `acp run`'s `sandbox`, `acp serve`'s `serve` and `storage`, and `version`.
 * Anything else is a typo (`chanel:`, `sesion:`) that would silently leave a protection off: refused.
 */
export const TOP_LEVEL_KEYS = [
  "version",
  "channel",
  "telegram",
  "webhook",
  "proxy",
  "defaults",
  "credentials",
  "redaction",
  "session",
  "graph",
  "sandbox",
  "serve",
  "storage",
] as const;

/**
 * The keys of the `defaults:` section: `timeout_seconds` (the proxy's consent timeout) and `policy` (the policy
 * file `acp init` writes there). Anything else is a typo (`timout_seconds:`) that would silently keep the default:
 * refused like an unknown top-level key.
 */
export const DEFAULTS_KEYS = ["timeout_seconds", "policy"] as const;

/**
 * The keys of the `sandbox:` section (`acp run`): `allow_egress`, `max_processes`, `max_memory` and `max_cpu`.
 * Anything else is a typo (`max_proceses:`) that would silently keep the default cap: refused like an unknown
 * top-level key.
 */
export const SANDBOX_KEYS = ["allow_egress", "max_processes", "max_memory", "max_cpu"] as const;

/** One key's check: its value, or every problem with it (each line naming the file, exit 4 messages). */
export type KeyCheck<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly problems: string };

/** Each key of `file` checked on its own: what `configInUse` throws and `acp doctor` reports. */
export interface ConfigChecks {
  /**
   * The file's top-level keys (`TOP_LEVEL_KEYS` only), the keys of `defaults:` and `sandbox:` (`DEFAULTS_KEYS`,
   * `SANDBOX_KEYS` only) and `version`
   * (`"1"`): `acp doctor`'s `config` check.
   */
  readonly file: KeyCheck<void>;
  readonly proxy: KeyCheck<ProxyConfig>;
  readonly credentials: KeyCheck<readonly CredentialRule[]>;
  readonly redaction: KeyCheck<RedactionRules>;
  readonly session: KeyCheck<Readonly<Record<string, unknown>>>;
  readonly graph: KeyCheck<GraphConfig>;
  readonly channel: KeyCheck<void>;
}

function check<T>(run: () => T): KeyCheck<T> {
  try {
    return { ok: true, value: run() };
  } catch (err) {
    if (!(err instanceof CliError) || err.exitCode !== EXIT.invalid) throw err;
    return { ok: false, problems: err.message };
  }
}

function proxySection(file: ConfigFile): ProxyConfig {
  const v = file.values;
  const defaults = v["defaults"];
  const timeout =
    typeof defaults === "object" && defaults !== null
      ? (defaults as Record<string, unknown>)["timeout_seconds"]
      : undefined;
  const parsed = parseProxyConfig(v["proxy"], timeout);
  if (parsed.ok) return parsed.value;
  const lines = parsed.issues.map((i) => {
    // `defaults.timeout_seconds` is reported as `proxy.…defaults.timeout_seconds`
    const dots = i.path.lastIndexOf("..");
    return `${whereIn(file, dots >= 0 ? i.path.slice(dots + 1) : i.path)}: ${i.message}`;
  });
  throw new CliError(lines.join("\n"), EXIT.invalid);
}

/**
 * The keys of a section (`defaults:`, `sandbox:`): each one of `known`; absent or empty is fine. A `defaults`
 * that is not a mapping is refused here; `sandbox`'s is refused by `sandboxAllowEgress` (said once).
 */
function sectionKeyProblems(file: ConfigFile, section: string, value: unknown, known: readonly string[]): string[] {
  if (value === null || value === undefined) return [];
  if (typeof value !== "object" || Array.isArray(value)) {
    if (section !== "defaults") return [];
    return [`${whereIn(file, [section])}: \`${section}\` must be a mapping (${known.join(", ")})`];
  }
  return Object.keys(value)
    .filter((key) => !known.includes(key))
    .map((key) => unknownKeyProblem(file, [section, key], known));
}

/**
 * The top-level keys of `file`: each one of `TOP_LEVEL_KEYS` (an unknown one named, with the closest known
 * key), the keys of `defaults:` and `sandbox:` likewise (`DEFAULTS_KEYS`, `SANDBOX_KEYS`), and `version`, when given, `"1"` (the number 1 is
 * the same version written without quotes). Throws every problem at `FILE:LINE:COL` (exit 4).
 */
export function checkTopLevelKeys(file: ConfigFile): void {
  const known: readonly string[] = TOP_LEVEL_KEYS;
  const problems: string[] = [];
  // in the file's order
  for (const [key, value] of Object.entries(file.values)) {
    if (key === "version") {
      if (value === "1" || value === 1) continue;
      const text = typeof value === "string" ? value : (JSON.stringify(value) ?? "");
      problems.push(
        `${whereIn(file, [key])}: \`version\` must be "1", the only format this acp reads (not \`${text.slice(0, 40)}\`)`,
      );
      continue;
    }
    if (key === "defaults") problems.push(...sectionKeyProblems(file, key, value, DEFAULTS_KEYS));
    else if (key === "sandbox") problems.push(...sectionKeyProblems(file, key, value, SANDBOX_KEYS));
    else if (!known.includes(key)) problems.push(unknownKeyProblem(file, [key], known));
  }
  if (problems.length > 0) throw new CliError(problems.join("\n"), EXIT.invalid);
}

/**
 * The `credentials:` entries, checked on their own and against the file's own upstreams (an entry without
 * `server` while two or more are configured is refused, `credentialProblems`; `--upstream` servers are
 * checked again when a proxy starts). A `proxy:` that does not parse is the proxy check's problem, not this one's.
 */
function credentialsFor(file: ConfigFile, locate: (path: readonly (string | number)[]) => string): CredentialRule[] {
  const rules = credentialRulesFrom(file.values["credentials"], file.path, locate);
  let upstreams: readonly string[] = [];
  try {
    upstreams = proxySection(file).upstreams.map((u) => u.name);
  } catch {
    /* reported by the proxy check */
  }
  const problems = credentialProblems(rules, upstreams);
  if (problems.length > 0) throw new CliError(problems.join("\n"), EXIT.invalid);
  return rules;
}

/**
 * Checks every key of the config file `file` that the proxy uses, each on its own (a problem in one does not
 * hide another's). Errors other than a bad value (exit 4) are thrown.
 */
export function checkConfigKeys(file: ConfigFile): ConfigChecks {
  const v = file.values;
  const locate = (path: readonly (string | number)[]): string => whereIn(file, path);
  return {
    file: check(() => checkTopLevelKeys(file)),
    proxy: check(() => proxySection(file)),
    credentials: check(() => credentialsFor(file, locate)),
    redaction: check(() => redactionRulesFrom(v["redaction"], file.path, locate)),
    session: check(() => checkSessionBlock(file)),
    graph: check(() => graphConfigFrom(file)),
    channel: check(() => checkChannelKeys(file)),
  };
}

/**
 * Checks every config key the proxy uses from one file. All problems are collected and reported together,
 * each naming the file (exit 4): a typo in a protection must never run silently without it.
 */
export function configInUse(file: ConfigFile): ConfigInUse {
  const c = checkConfigKeys(file);
  if (c.file.ok && c.proxy.ok && c.credentials.ok && c.redaction.ok && c.session.ok && c.graph.ok && c.channel.ok) {
    return {
      file,
      proxy: c.proxy.value,
      redaction: c.redaction.value,
      credentials: c.credentials.value,
      session: c.session.value,
      graph: c.graph.value,
    };
  }
  const problems = (["file", ...CONFIG_KEYS] as const).flatMap((key) => {
    const k = c[key];
    return k.ok ? [] : [k.problems];
  });
  throw new CliError(problems.join("\n"), EXIT.invalid);
}

/**
 * `sandbox.allow_egress` of the config file (what `acp run` lets the agent reach without asking): a list of
 * `HOST:PORT` strings, each checked; absent: none. Every problem at `FILE:LINE:COL` (exit 4). Not part of
 * `configInUse`: `acp proxy` does not use it, `acp run` and `acp doctor` check it on top.
 */
export function sandboxAllowEgress(file: ConfigFile): readonly string[] {
  const sandbox = file.values["sandbox"];
  if (sandbox === undefined || sandbox === null) return [];
  if (typeof sandbox !== "object" || Array.isArray(sandbox)) {
    throw new CliError(`${whereIn(file, ["sandbox"])}: \`sandbox\` must be a mapping (\`allow_egress\`)`, EXIT.invalid);
  }
  const list = (sandbox as Record<string, unknown>)["allow_egress"];
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list) || !list.every((e) => typeof e === "string")) {
    throw new CliError(
      `${whereIn(file, ["sandbox", "allow_egress"])}: \`sandbox.allow_egress\` must be a list of HOST:PORT strings`,
      EXIT.invalid,
    );
  }
  const parsed = parseEgressAllowList(list);
  if (!parsed.ok) {
    const lines = parsed.issues.map((i) => `${whereIn(file, ["sandbox", ...i.path])}: ${i.message}`);
    throw new CliError(lines.join("\n"), EXIT.invalid);
  }
  return list;
}

/**
 * `sandbox.max_processes` of the config file (the cap on the processes of `acp run`'s sandbox, as
 * `--max-processes`): a whole number of at least 1; absent: undefined (the default cap). Exit 4 at `FILE:LINE:COL`.
 */
export function sandboxMaxProcesses(file: ConfigFile): number | undefined {
  const sandbox = file.values["sandbox"];
  if (typeof sandbox !== "object" || sandbox === null || Array.isArray(sandbox)) return undefined;
  const value = (sandbox as Record<string, unknown>)["max_processes"];
  if (value === undefined || value === null) return undefined;
  if (typeof value === "number" && Number.isSafeInteger(value) && value >= 1) return value;
  throw new CliError(
    `${whereIn(file, ["sandbox", "max_processes"])}: \`sandbox.max_processes\` must be a whole number of at least 1, not ${JSON.stringify(value)}`,
    EXIT.invalid,
  );
}

/**
 * `sandbox.max_memory` of the config file (the cap on the memory of `acp run`'s sandbox, as `--max-memory`): a
 * whole number of bytes, or a size string (`2G`, `512MiB`: K, M, G, T, powers of 1024), at least 32 MiB; absent:
 * undefined (the default cap). Exit 4 at `FILE:LINE:COL`.
 */
export function sandboxMaxMemory(file: ConfigFile): number | undefined {
  const sandbox = file.values["sandbox"];
  if (typeof sandbox !== "object" || sandbox === null || Array.isArray(sandbox)) return undefined;
  const value = (sandbox as Record<string, unknown>)["max_memory"];
  if (value === undefined || value === null) return undefined;
  const bytes =
    typeof value === "number" && Number.isSafeInteger(value)
      ? value
      : typeof value === "string"
        ? parseMemorySize(value)
        : undefined;
  if (bytes !== undefined && bytes >= MIN_MAX_MEMORY) return bytes;
  throw new CliError(
    `${whereIn(file, ["sandbox", "max_memory"])}: \`sandbox.max_memory\` must be a size of at least ${formatMemorySize(MIN_MAX_MEMORY)} (bytes, or a whole number with K, M, G or T, e.g. 2G), not ${JSON.stringify(value)}`,
    EXIT.invalid,
  );
}

/**
 * `sandbox.max_cpu` of the config file (the cap on the CPU time of `acp run`'s sandbox, as `--max-cpu`): a number
 * of CPUs (`1.5`) from 0.01 to 4096; absent: undefined (no CPU cap). Exit 4 at `FILE:LINE:COL`.
 */
export function sandboxMaxCpu(file: ConfigFile): number | undefined {
  const sandbox = file.values["sandbox"];
  if (typeof sandbox !== "object" || sandbox === null || Array.isArray(sandbox)) return undefined;
  const value = (sandbox as Record<string, unknown>)["max_cpu"];
  if (value === undefined || value === null) return undefined;
  const cpus = typeof value === "number" || typeof value === "string" ? parseCpuCount(String(value)) : undefined;
  if (cpus !== undefined) return cpus;
  throw new CliError(
    `${whereIn(file, ["sandbox", "max_cpu"])}: \`sandbox.max_cpu\` must be a number of CPUs from ${MIN_MAX_CPU} to ${MAX_MAX_CPU} (e.g. 1.5), not ${JSON.stringify(value)}`,
    EXIT.invalid,
  );
}

/** The caps `sandbox:` sets for `acp run` (each undefined when not set: the flag's default). */
export interface SandboxCaps {
  readonly maxProcesses: number | undefined;
  readonly maxMemory: number | undefined;
  readonly maxCpu: number | undefined;
}

/**
 * Every cap key of `sandbox:` (`sandboxMaxProcesses`, `sandboxMaxMemory`, `sandboxMaxCpu`); every problem at
 * once (exit 4).
 */
export function sandboxCaps(file: ConfigFile): SandboxCaps {
  const problems: string[] = [];
  const one = <T>(read: (file: ConfigFile) => T): T | undefined => {
    const k = check(() => read(file));
    if (k.ok) return k.value;
    problems.push(k.problems);
    return undefined;
  };
  const caps = { maxProcesses: one(sandboxMaxProcesses), maxMemory: one(sandboxMaxMemory), maxCpu: one(sandboxMaxCpu) };
  if (problems.length > 0) throw new CliError(problems.join("\n"), EXIT.invalid);
  return caps;
}

/** `sandboxAllowEgress` and `sandboxCaps` as a key check (`acp doctor`): the destinations and the caps set. */
export function checkSandboxKeys(file: ConfigFile): KeyCheck<{ allowEgress: readonly string[]; caps: SandboxCaps }> {
  return check(() => {
    const problems: string[] = [];
    const caps = collectInvalid(problems, () => sandboxCaps(file));
    const allowEgress = collectInvalid(problems, () => sandboxAllowEgress(file)) ?? [];
    if (caps === undefined || problems.length > 0) throw new CliError(problems.join("\n"), EXIT.invalid);
    return { allowEgress, caps };
  });
}

/** The home's `config.yml` (absent: an empty config), checked: what `acp proxy` uses without `--config`. */
export function homeConfigInUse(home: string): ConfigInUse {
  return configInUse(readConfigFile(join(home, "config.yml"), false));
}

/**
 * `read()`, or undefined with its message added to `problems` when it refuses the config file (exit 4), so every
 * key's problem is said at once; any other error is thrown on.
 */
export function collectInvalid<T>(problems: string[], read: () => T): T | undefined {
  try {
    return read();
  } catch (err) {
    if (!(err instanceof CliError) || err.exitCode !== EXIT.invalid) throw err;
    problems.push(err.message);
    return undefined;
  }
}

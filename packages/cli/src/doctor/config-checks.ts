import { isSealedSecret } from "@acp/core";
import type { HomeCheck } from "@acp/store";
import { DEFAULT_MAX_MEMORY, DEFAULT_MAX_PROCESSES, formatCpuCount, formatMemorySize } from "@acp/proxy/sandbox";
import { CliError } from "../exit-codes.js";
import { readConfigFile, type ConfigFile } from "../wiring/config-file.js";
import {
  CONFIG_KEYS,
  checkConfigKeys,
  checkSandboxKeys,
  type ConfigChecks,
  type SandboxCaps,
  type ConfigKey,
} from "../wiring/config-in-use.js";
import { plainChannelSecrets } from "../wiring/config-channels.js";
import { readHomeConsentGraph } from "../wiring/decide.js";
import { SECRET_CONFIG_PATHS } from "./home-checks.js";

/**
 * A problem message as doctor lines, one per problem, in the proxy's own (exit 4) words: a heading that ends
 * with `:` followed by indented lines (the `session` block's keys) becomes one line per indented line.
 */
function problemLines(message: string): string[] {
  const lines: string[] = [];
  let heading: string | undefined;
  let used = false;
  for (const line of message.split("\n")) {
    if (line.trim() === "") continue;
    if (/^\s/.test(line)) {
      lines.push(heading !== undefined ? `${heading} ${line.trim()}` : line.trim());
      used = heading !== undefined;
      continue;
    }
    if (heading !== undefined && !used) lines.push(heading);
    heading = line.endsWith(":") ? line : undefined;
    used = false;
    if (heading === undefined) lines.push(line);
  }
  if (heading !== undefined && !used) lines.push(heading);
  return lines;
}

const plural = (n: number, one: string): string => `${n} ${one}${n === 1 ? "" : "s"}`;

/** What an accepted key turns on, in a few words. */
function summary(c: ConfigChecks, key: ConfigKey, file: ConfigFile): string {
  switch (key) {
    case "proxy":
      if (!c.proxy.ok) return "";
      return [
        plural(c.proxy.value.upstreams.length, "upstream server"),
        ...(c.proxy.value.agentTokenNames !== undefined
          ? [`agents' tokens of ${c.proxy.value.agentTokenNames.join(", ")}`]
          : []),
      ].join(", ");
    case "credentials":
      return c.credentials.ok ? plural(c.credentials.value.length, "vault credential") : "";
    case "redaction":
      return c.redaction.ok
        ? `${plural(c.redaction.value.keys.length, "key pattern")}, ${plural(c.redaction.value.values.length, "value pattern")}`
        : "";
    case "session": {
      if (!c.session.ok) return "";
      const given = c.session.value;
      if (Object.keys(given).length === 0) return "no `session:` block: the runtime's defaults";
      const reads = given["reads"] as Record<string, unknown> | undefined;
      const on = [
        given["escalate_after_instructions"] === true ? "changes ask after injected text" : null,
        reads?.["after_instructions"] === "ask" ? "reads ask after injected text" : null,
      ].filter((x) => x !== null);
      return on.length > 0 ? on.join("; ") : "parses";
    }
    case "graph": {
      if (!c.graph.ok) return "";
      const { mapping, threshold } = c.graph.value;
      if (mapping === undefined && threshold === undefined) return "no `graph:` section";
      return [
        mapping !== undefined
          ? `${mapping.length} mapping ${mapping.length === 1 ? "entry" : "entries"}`
          : "no mapping",
        threshold !== undefined ? `threshold ${threshold}` : "the default threshold",
      ].join(", ");
    }
    case "channel": {
      const channel = file.values["channel"];
      return typeof channel === "string" && channel !== "" ? channel : "prompt (the terminal)";
    }
  }
}

/**
 * The caps `acp run` applies to its sandbox with this config and no flag: each key's value, else the default,
 * said as such. Whether this machine can apply them (a writable cgroup) is `acp run`'s to find out.
 */
function capsSummary(caps: SandboxCaps): string {
  const processes =
    caps.maxProcesses !== undefined
      ? `${caps.maxProcesses} processes (sandbox.max_processes)`
      : `${DEFAULT_MAX_PROCESSES} processes (default)`;
  const memory =
    caps.maxMemory !== undefined
      ? `${formatMemorySize(caps.maxMemory)} of memory (sandbox.max_memory)`
      : `${formatMemorySize(DEFAULT_MAX_MEMORY)} of memory (default)`;
  const cpu =
    caps.maxCpu !== undefined
      ? `${formatCpuCount(caps.maxCpu)} of CPU time (sandbox.max_cpu)`
      : "no cap on CPU time (default)";
  return `acp run caps the sandbox at ${processes}, ${memory}, ${cpu}; --max-processes, --max-memory and --max-cpu override`;
}

/**
 * The config file the proxy would use (`path`: `--config FILE`, else `$ACP_HOME/config.yml`) checked the way
 * `acp proxy` and `acp run` check it before they start (`checkConfigKeys`, `checkSandboxKeys`): a check per
 * key (`proxy`, `credentials`, `redaction`, `session`, `graph`, `channel`, and `sandbox` and `sandbox caps` for
 * `acp run`), a failed one per problem with the proxy's message; the file parses, holds no plain secrets and no
 * unknown top-level key, and its `version` is "1" (`config`); the home's consent graph validates.
 */
export function checkConfigInUse(home: string, read: ConfigFile | CliError): HomeCheck[] {
  if (read instanceof CliError) return [{ status: "fail", name: "config", detail: read.message }];
  const file = read;
  const path = file.path;
  const doc = file.document;
  // every serve.agent_tokens.NAME, serve.approver_tokens.NAME, proxy.agent_tokens.NAME and
  // serve.trusted_channel_keys.KEY_ID is a secret too
  const namedPaths = (
    [
      ["serve", "agent_tokens"],
      ["serve", "approver_tokens"],
      ["proxy", "agent_tokens"],
      ["serve", "trusted_channel_keys"],
    ] as const
  ).flatMap(([section, key]) => {
    const within: unknown = file.values[section];
    const named: unknown =
      typeof within === "object" && within !== null ? (within as Record<string, unknown>)[key] : undefined;
    return typeof named === "object" && named !== null && !Array.isArray(named)
      ? Object.keys(named).map((name) => `${section}.${key}.${name}`)
      : [];
  });
  const keys = checkConfigKeys(file);
  // a secret the channel check already refuses (the chosen channel's, as `acp proxy` would: with where it is
  // and what to run) is not said twice
  const saidByChannel = keys.channel.ok ? [] : plainChannelSecrets(file);
  const plainAll = [...SECRET_CONFIG_PATHS, ...namedPaths].filter((p) => {
    const v: unknown = doc?.getIn(p.split("."));
    return typeof v === "string" && v !== "" && !isSealedSecret(v);
  });
  const plain = plainAll.filter((p) => !saidByChannel.includes(p));
  const checks: HomeCheck[] = [];
  if (plain.length > 0) {
    checks.push({
      status: "fail",
      name: "config",
      detail: `plain secret in ${plain.map((p) => `\`${p}\``).join(", ")} of ${path} (seal it with \`acp config set-secret\`)`,
    });
  }
  // an unknown top-level key or another `version` fails the file's own check, naming the key
  if (!keys.file.ok) {
    for (const line of problemLines(keys.file.problems)) checks.push({ status: "fail", name: "config", detail: line });
  }
  if (checks.length === 0) {
    const others = plainAll.length > plain.length ? "no other plain secrets (see below)" : "no plain secrets";
    checks.push({ status: "ok", name: "config", detail: `${path} parses; ${others}` });
  }
  for (const key of CONFIG_KEYS) {
    const k = keys[key];
    if (k.ok) checks.push({ status: "ok", name: key, detail: summary(keys, key, file) });
    else for (const line of problemLines(k.problems)) checks.push({ status: "fail", name: key, detail: line });
  }
  // acp run's own key, checked on top of the proxy's
  const sandbox = checkSandboxKeys(file);
  if (sandbox.ok) {
    const n = sandbox.value.allowEgress.length;
    checks.push({
      status: "ok",
      name: "sandbox",
      detail: `acp run: ${n === 0 ? "no destination" : plural(n, "destination")} allowed without asking`,
    });
    checks.push({ status: "ok", name: "sandbox caps", detail: capsSummary(sandbox.value.caps) });
  } else
    for (const line of problemLines(sandbox.problems)) checks.push({ status: "fail", name: "sandbox", detail: line });
  try {
    if (readHomeConsentGraph(home) !== null) checks.push({ status: "ok", name: "consent graph", detail: "validates" });
  } catch (err) {
    if (!(err instanceof CliError)) throw err;
    for (const line of problemLines(err.message).filter((l) => l !== "invalid consent graph:")) {
      checks.push({ status: "fail", name: "consent graph", detail: line });
    }
  }
  return checks;
}

/**
 * The config file doctor checks, read once (`readConfigFile`, required as `acp proxy --config` requires it), or
 * the error it gave: every check that needs it takes this one reading (a `--config` named pipe holds what was
 * written into it once; a second open would wait for a writer that never comes).
 */
export function readDoctorConfig(path: string): ConfigFile | CliError {
  try {
    return readConfigFile(path, true);
  } catch (err) {
    if (!(err instanceof CliError)) throw err;
    return err;
  }
}

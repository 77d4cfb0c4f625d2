/**
 * Every config.yml key a command reads is documented (docs/reference/home.md: type, default, the flag that wins)
 * and, unless listed below, shown in the starter file `acp init` writes with the default that applies. A key added
 * to a section's key list without a row in the reference, or a row or template line left for a key that is gone,
 * fails here.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { PROXY_DEFAULTS, PROXY_KEYS } from "@acp/proxy/config";
import { DEFAULT_MAX_MEMORY, DEFAULT_MAX_PROCESSES } from "@acp/proxy/sandbox";
import { configTemplate } from "@acp/store";
import { CHANNEL_SECTIONS } from "../src/wiring/config-channels.js";
import { readConfigFile } from "../src/wiring/config-file.js";
import {
  configInUse,
  DEFAULTS_KEYS,
  sandboxAllowEgress,
  sandboxCaps,
  SANDBOX_KEYS,
  TOP_LEVEL_KEYS,
} from "../src/wiring/config-in-use.js";
import { SERVE_KEYS, STORAGE_KEYS } from "../src/wiring/serve-config.js";
import { tempRoot } from "./home-fixture.js";
import { createProgram } from "../src/main.js";
import { runCli, silentContext } from "./run.js";

const repo = join(dirname(fileURLToPath(import.meta.url)), "../../..");
const root = tempRoot("config-keys-documented");
afterAll(root.cleanup);

/** Sections documented key by key, with the list of keys each command checks. */
const PER_KEY: Readonly<Record<string, readonly string[]>> = {
  telegram: CHANNEL_SECTIONS.telegram.keys,
  webhook: CHANNEL_SECTIONS.webhook.keys,
  proxy: PROXY_KEYS,
  defaults: DEFAULTS_KEYS,
  sandbox: SANDBOX_KEYS,
  serve: SERVE_KEYS,
  storage: STORAGE_KEYS,
};
/** Top-level keys documented as one row (their insides have pages of their own). */
const WHOLE = ["version", "channel", "credentials", "session", "redaction", "graph"];
/** Keys the starter file leaves out (home.md says so); everything else is in it, set or commented out. */
const NOT_IN_TEMPLATE = [
  "credentials",
  "redaction",
  "graph",
  "serve.agent_servers",
  "serve.approver_tokens",
  "serve.trusted_channel_keys",
];
/** The command whose flags override a section's keys. */
const COMMAND_OF: Readonly<Record<string, string>> = {
  proxy: "proxy",
  defaults: "proxy",
  sandbox: "run",
  serve: "serve",
  storage: "serve",
  session: "replay",
};

const expectedKeys = [
  ...WHOLE,
  ...Object.entries(PER_KEY).flatMap(([section, keys]) => keys.map((k) => `${section}.${k}`)),
];

interface Row {
  readonly key: string;
  readonly type: string;
  readonly fallback: string;
  readonly flags: string;
}

/** The rows of home.md's key table (`| key | type | default | flag / environment | meaning |`). */
function referenceRows(): Row[] {
  const lines = readFileSync(join(repo, "docs/reference/home.md"), "utf8").split("\n");
  const start = lines.findIndex((l) => l.startsWith("| key | type | default | flag / environment | meaning |"));
  expect(start, "home.md has the key table").toBeGreaterThan(0);
  const rows: Row[] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith("|")) break;
    const cells = line
      .slice(1, -1)
      .split(" | ")
      .map((c) => c.trim());
    const key = /^`([a-z_.]+)`$/.exec(cells[0] ?? "")?.[1];
    expect(key, `a key in backticks: ${line.slice(0, 60)}`).toBeDefined();
    rows.push({ key: key ?? "", type: cells[1] ?? "", fallback: cells[2] ?? "", flags: cells[3] ?? "" });
  }
  return rows;
}

/** The starter file's lines by top-level section, set (`proxy:`) or commented out (`# serve:`). */
function templateSections(text: string): Map<string, string[]> {
  const sections = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const line of text.split("\n")) {
    const header = /^(?:# )?([a-z_]+):/.exec(line)?.[1];
    if (header !== undefined && !/^# [a-z_]+: ./.test(line)) {
      current = [line];
      sections.set(header, current);
    } else current?.push(line);
  }
  return sections;
}

/** Whether `key` is written in `lines`, set or commented out (`port: 8443`, `#   bind: "127.0.0.1"`). */
function writes(lines: readonly string[], key: string): boolean {
  return lines.some((l) => new RegExp(`^\\s*(#\\s*)*${key}:`).test(l));
}

describe("config.yml keys: the reference, the key lists and the starter file agree", () => {
  it("every top-level key is documented one way or key by key", () => {
    expect([...TOP_LEVEL_KEYS].sort()).toEqual([...WHOLE, ...Object.keys(PER_KEY)].sort());
  });

  it("home.md has one row per key a command reads, and none for a key no command reads", () => {
    const rows = referenceRows().map((r) => r.key);
    expect(
      rows.filter((k, i) => rows.indexOf(k) !== i),
      "a key listed twice",
    ).toEqual([]);
    expect([...rows].sort()).toEqual([...expectedKeys].sort());
  });

  it("each row gives a type and a default, and each flag or variable it names is one its command takes", async () => {
    const help = new Map<string, string>();
    for (const command of new Set(Object.values(COMMAND_OF))) {
      const out = await runCli([command, "--help"]);
      expect(out.code).toBe(0);
      help.set(command, out.stdout);
    }
    for (const row of referenceRows()) {
      expect(row.type, `${row.key}: type`).not.toBe("");
      expect(row.fallback, `${row.key}: default`).not.toBe("");
      expect(row.flags, `${row.key}: flag (— for none)`).not.toBe("");
      const named = [...row.flags.matchAll(/--[a-z][a-z-]+|ACP_[A-Z_]+/g)].map((m) => m[0]);
      if (row.flags === "—") continue;
      expect(named.length, `${row.key}: names a flag or variable`).toBeGreaterThan(0);
      const command = COMMAND_OF[row.key.split(".")[0] ?? ""];
      expect(command, `${row.key}: a section whose keys a flag overrides`).toBeDefined();
      for (const flag of named) expect(help.get(command ?? ""), `${row.key}: acp ${command} ${flag}`).toContain(flag);
    }
  });

  it("a flag whose help names a key as its default is that key's row's flag", async () => {
    const rows = new Map(referenceRows().map((r) => [r.key, r.flags]));
    const program = await createProgram(silentContext());
    let named = 0;
    for (const command of program.commands) {
      for (const option of command.options) {
        const keys = [...option.description.matchAll(/\b([a-z_]+\.[a-z_]+)\b/g)]
          .map((m) => m[1] ?? "")
          .filter((k) => rows.has(k));
        for (const key of keys) {
          named++;
          expect(rows.get(key), `acp ${command.name()} ${option.long ?? ""} names ${key}`).toContain(option.long);
        }
      }
    }
    expect(named).toBeGreaterThan(5);
  });

  it("the starter file shows every key but the few home.md names, and no key a command does not read", () => {
    const text = configTemplate("/home/me/.acp/policy.yml");
    const sections = templateSections(text);
    expect([...sections.keys()].filter((s) => !(TOP_LEVEL_KEYS as readonly string[]).includes(s))).toEqual([]);
    const missing = expectedKeys.filter((key) => {
      const [section = "", sub] = key.split(".");
      const lines = sections.get(section);
      if (lines === undefined) return true;
      return sub !== undefined && !writes(lines, sub);
    });
    expect(missing.sort()).toEqual([...NOT_IN_TEMPLATE].sort());
    // keys written one level in (set, `  #   key:` inside a set section, `#   key:` inside a commented one)
    for (const [section, lines] of sections) {
      const known = PER_KEY[section];
      if (known === undefined) continue;
      for (const line of lines) {
        const key = /^(?: {2}| {2}# {3}|# {3})([a-z_]+):/.exec(line)?.[1];
        if (key !== undefined) expect(known, `${section}.${key} in the starter file`).toContain(key);
      }
    }
    const reference = readFileSync(join(repo, "docs/reference/home.md"), "utf8").replace(/\s+/g, " ");
    expect(reference).toContain(
      "`credentials`, `redaction`, `graph`, `serve.agent_servers`, `serve.approver_tokens` and `serve.trusted_channel_keys` are only here",
    );
  });

  it("the keys the starter file shows commented out inside its set sections load, with the defaults that apply", () => {
    // `  #   key: value` lines (one level in, a value on the line): uncommented, as a person would
    const text = configTemplate(join(root.dir, "policy.yml"))
      .split("\n")
      .map((l) => l.replace(/^ {2}# {3}(?=[a-z_]+: \S)/, "  "))
      .join("\n");
    const path = join(root.dir, "uncommented.yml");
    writeFileSync(path, text);
    const file = readConfigFile(path, true);
    const proxy = configInUse(file).proxy;
    expect(proxy.bind).toBe(PROXY_DEFAULTS.bind);
    expect(proxy.prefixTools).toBe(PROXY_DEFAULTS.prefixTools);
    expect(proxy.callTimeoutMs).toBe(PROXY_DEFAULTS.callTimeoutMs);
    expect(proxy.callMaxMs).toBe(PROXY_DEFAULTS.callMaxMs);
    expect(proxy.maxCallsInFlight).toBe(PROXY_DEFAULTS.maxCallsInFlight);
    expect(proxy.insecurePlainHttp).toBeUndefined();
    const values = file.values as Record<string, Record<string, unknown>>;
    expect(values["webhook"]?.["callback_listen"]).toBe("127.0.0.1:0");
    expect(values["telegram"]?.["api_root"]).toBe("https://api.telegram.org");
    expect(values["proxy"]?.["max_sessions"]).toBe(256);
  });

  it("the commented sandbox: block, uncommented, is what acp run applies without it", () => {
    const lines = configTemplate(join(root.dir, "policy.yml")).split("\n");
    const start = lines.indexOf("# sandbox:");
    expect(start).toBeGreaterThan(0);
    const end = lines.findIndex((l, i) => i > start && l.trim() === "");
    const block = lines.slice(start, end === -1 ? undefined : end).map((l) => l.replace(/^# /, ""));
    const path = join(root.dir, "sandbox.yml");
    writeFileSync(path, `version: "1"\n${block.join("\n")}\n`);
    const file = readConfigFile(path, true);
    expect(sandboxCaps(file)).toEqual({
      maxProcesses: DEFAULT_MAX_PROCESSES,
      maxMemory: DEFAULT_MAX_MEMORY,
      maxCpu: undefined,
    });
    expect(sandboxAllowEgress(file)).toEqual([]);
    expect(configInUse(file).proxy).toBeDefined();
  });
});

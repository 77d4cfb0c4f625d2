import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { CliContext } from "../src/context.js";
import { CliError } from "../src/exit-codes.js";
import { readConfigFile, whereIn } from "../src/wiring/config-file.js";
import { configInUse, sandboxAllowEgress } from "../src/wiring/config-in-use.js";
import { configuredChannels } from "../src/wiring/config-channels.js";
import { createProxyWiring } from "../src/wiring/proxy-wiring.js";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";

const root = tempRoot("proxy-config-in-use");
afterAll(root.cleanup);
let n = 0;

function fileWith(text: string | Buffer): string {
  const path = join(root.dir, `config-${++n}.yml`);
  writeFileSync(path, text);
  return path;
}

function failure(run: () => unknown): { code: number; message: string } {
  try {
    run();
  } catch (err) {
    if (err instanceof CliError) return { code: err.exitCode, message: err.message };
    throw err;
  }
  return { code: 0, message: "no error" };
}

function ctxFor(home: string): CliContext {
  return {
    io: {
      stdout: { write: () => true },
      stderr: { write: () => true },
      readStdin: () => Promise.resolve(""),
      stdinIsTTY: false,
      env: envFor(home),
      cwd: root.dir,
      now: () => new Date(),
    },
    exitCode: 0,
  };
}

describe("readConfigFile: a config file read like the store reads config.yml", () => {
  it("a missing file is an empty config, unless it was named (--config: exit 1 naming it)", () => {
    const missing = join(root.dir, "missing.yml");
    expect(readConfigFile(missing, false)).toEqual({ path: missing, document: null, values: {} });
    const named = failure(() => readConfigFile(missing, true));
    expect(named.code).toBe(1);
    expect(named.message).toContain(missing);
  });

  it("refuses duplicate keys, YAML errors, a top level that is not a mapping, and more than 1 MiB (exit 4, FILE named)", () => {
    const duplicate = fileWith('version: "1"\nchannel: prompt\nchannel: webhook\n');
    const dup = failure(() => readConfigFile(duplicate, true));
    expect(dup.code).toBe(4);
    expect(dup.message.startsWith(`${duplicate}:3:1: `)).toBe(true);
    const broken = fileWith("proxy: [1\n");
    expect(failure(() => readConfigFile(broken, true)).message).toMatch(new RegExp(`^${broken}:\\d+:\\d+: `));
    const list = fileWith("- 1\n- 2\n");
    expect(failure(() => readConfigFile(list, true))).toMatchObject({
      code: 4,
      message: `${list}: must be a mapping of settings (\`version\`, \`proxy\`, \`session\`, …)`,
    });
    const big = fileWith(`# ${"x".repeat(1024 * 1024)}\n`);
    expect(failure(() => readConfigFile(big, true))).toMatchObject({
      code: 4,
      message: `\`${big}\` is larger than 1 MiB`,
    });
  });

  it("an empty file is an empty config", () => {
    expect(readConfigFile(fileWith(""), true).values).toEqual({});
  });
});

describe("configInUse: every key the proxy uses, checked together", () => {
  it("returns the credentials, redaction patterns and session block of the file", () => {
    const path = fileWith(
      [
        "channel: webhook",
        'webhook:\n  url: "http://127.0.0.1:9/consent"\n  secret: "encrypted:x"',
        "credentials:\n  - { secret: TOKEN, server: github, tool: create_issue, argument: token }",
        "redaction:\n  keys: [pin]",
        "session:\n  escalate_after_instructions: true",
        "",
      ].join("\n"),
    );
    const config = configInUse(readConfigFile(path, true));
    expect(config.file.path).toBe(path);
    expect(config.credentials.map((r) => [r.secret, r.server("github"), r.server("other")])).toEqual([
      ["TOKEN", true, false],
    ]);
    expect(config.redaction.keys).toContain("pin");
    expect(config.session).toEqual({ escalate_after_instructions: true });
  });

  it("names every bad key at once, each with the file (exit 4)", () => {
    const path = fileWith(
      "channel: fax\ncredentials: {}\nredaction:\n  colour: red\nsession:\n  escalate_after_instructions: maybe\n",
    );
    const { code, message } = failure(() => configInUse(readConfigFile(path, true)));
    expect(code).toBe(4);
    const lines = message.split("\n");
    for (const key of ["`channel`", "`credentials`", "redaction.colour", "`session.escalate_after_instructions`"]) {
      expect(lines.find((l) => l.includes(key)) ?? `no line names ${key}`).toContain(path);
    }
    expect(lines.find((l) => l.includes("`channel`"))).toMatch(new RegExp(`^${path}:1:10: `));
    expect(lines.find((l) => l.includes("session.escalate"))).toMatch(new RegExp(`^${path}:6:32: `));
  });

  it("checks the channel sections: unknown keys, malformed values, and what the chosen channel needs, at FILE:LINE:COL", () => {
    const path = fileWith(
      [
        "channel: webhook",
        "webhook:",
        '  url: "ftp://approvals.example"',
        "  callback_listen: nowhere",
        "  secert: x",
        "telegram:",
        '  chat_id: "not a chat"',
        "",
      ].join("\n"),
    );
    const lines = failure(() => configInUse(readConfigFile(path, true))).message.split("\n");
    expect(lines).toContain(`${path}:3:8: \`webhook.url\` must be an http(s) URL, got \`ftp://approvals.example\``);
    expect(lines).toContain(`${path}:4:20: \`webhook.callback_listen\` must be HOST:PORT, got \`nowhere\``);
    expect(lines).toContain(`${path}:5:11: unknown key \`webhook.secert\` (did you mean \`webhook.secret\`?)`);
    expect(lines).toContain(
      `${path}:3:3: \`channel: webhook\` needs \`webhook.secret\` (acp config set-secret webhook.secret)`,
    );
    expect(lines.find((l) => l.includes("telegram.chat_id"))).toMatch(new RegExp(`^${path}:7:12: `));
    const telegram = fileWith("channel: telegram\ntelegram:\n  bot_token: ''\n  chat_id: ''\n");
    const needs = failure(() => configInUse(readConfigFile(telegram, true))).message;
    expect(needs).toContain(
      "`channel: telegram` needs `telegram.bot_token` (acp config set-secret telegram.bot_token)",
    );
    expect(needs).toContain("`channel: telegram` needs `telegram.chat_id`");
    // the starter file's empty sections of the channels not chosen are fine
    const prompt = fileWith(
      "channel: prompt\ntelegram:\n  bot_token: ''\n  chat_id: ''\nwebhook:\n  url: ''\n  secret: ''\n",
    );
    expect(() => configInUse(readConfigFile(prompt, true))).not.toThrow();
    const group = fileWith("channel: telegram\ntelegram:\n  bot_token: 'encrypted:x'\n  chat_id: -1001234567890\n");
    expect(() => configInUse(readConfigFile(group, true))).not.toThrow();
  });

  it("names bad `credentials:` and `redaction:` entries at FILE:LINE:COL", () => {
    const path = fileWith("credentials:\n  - secret: X\n    colour: red\nredaction:\n  keys: pin\n");
    const lines = failure(() => configInUse(readConfigFile(path, true))).message.split("\n");
    expect(lines).toContain(
      `${path}:2:5: credentials.0: unknown key \`colour\` (expected secret, server, tool, argument, inject)`,
    );
    expect(lines.find((l) => l.includes("redaction.keys"))).toMatch(new RegExp(`^${path}:5:9: `));
  });

  it("a missing file has no keys: defaults, no credentials, the runtime's session defaults, no graph settings", () => {
    const config = configInUse(readConfigFile(join(root.dir, "none.yml"), false));
    expect(config.credentials).toEqual([]);
    expect(config.session).toEqual({});
    expect(config.graph).toEqual({});
    expect(config.proxy.upstreams).toEqual([]);
  });

  it("returns the file's `graph:` mapping and threshold and its `proxy:` section", () => {
    const path = fileWith(
      [
        "graph:",
        "  threshold: 0.4",
        "  mapping:",
        "    - { tool: send_email, domain: email, action: send }",
        "proxy:",
        "  upstream_servers:",
        "    - { name: mail, command: mail-server }",
        "defaults:",
        "  timeout_seconds: 7",
        "",
      ].join("\n"),
    );
    const config = configInUse(readConfigFile(path, true));
    expect(config.graph.threshold).toBe(0.4);
    expect(config.graph.mapping).toEqual([{ tool: "send_email", domain: "email", action: "send" }]);
    expect(config.proxy.upstreams.map((u) => u.name)).toEqual(["mail"]);
    expect(config.proxy.consentTimeoutMs).toBe(7000);
  });

  it("names bad `graph:` and `proxy:` values at FILE:LINE:COL, all of them, with the other keys' problems", () => {
    const path = fileWith(
      [
        "graph:", // 1
        "  threshold: -1", // 2
        "  mapping:", // 3
        "    - { tool: send_email, domian: email, action: send }", // 4
        "  colour: red", // 5
        "proxy:", // 6
        "  prefix_tools: sometimes", // 7
        "defaults:", // 8
        "  timeout_seconds: soon", // 9
        "channel: fax", // 10
        "",
      ].join("\n"),
    );
    const { code, message } = failure(() => configInUse(readConfigFile(path, true)));
    expect(code).toBe(4);
    const lines = message.split("\n");
    expect(lines).toContain(`${path}:2:14: \`graph.threshold\` must be a number from 0 to 1`);
    expect(lines).toContain(`${path}:5:11: unknown key \`graph.colour\` (expected mapping, threshold)`);
    expect(lines.find((l) => l.includes("domian"))).toMatch(new RegExp(`^${path}:4:\\d+: `));
    expect(lines.find((l) => l.includes("prefix_tools"))).toMatch(new RegExp(`^${path}:7:17: `));
    expect(lines.find((l) => l.includes("timeout_seconds"))).toMatch(new RegExp(`^${path}:9:20: `));
    expect(lines.find((l) => l.includes("`channel`"))).toContain(path);
  });
});

describe("whereIn: where a key sits in the file", () => {
  it("gives FILE:LINE:COL of the deepest node on the path the file has, FILE without one", () => {
    const file = readConfigFile(fileWith("graph:\n  mapping:\n    - tool: a\n      domain: b\n"), true);
    expect(whereIn(file, ["graph", "mapping", 0, "domain"])).toBe(`${file.path}:4:15`);
    expect(whereIn(file, ["graph", "mapping", 0, "action"])).toBe(`${file.path}:3:7`);
    expect(whereIn(file, ["graph", "threshold"])).toBe(`${file.path}:2:3`);
    expect(whereIn(file, ["proxy", "port"])).toBe(file.path);
    const missing = readConfigFile(join(root.dir, "none.yml"), false);
    expect(whereIn(missing, ["graph"])).toBe(missing.path);
  });
});

describe("createProxyWiring: the config it is given, else the home's config.yml", () => {
  it("takes the given config and never reads the home's (whose bad keys would stop it)", async () => {
    const { home } = fixtureHome(root.dir);
    writeFileSync(join(home, "config.yml"), 'version: "1"\ncredentials: 7\n');
    const wiring = createProxyWiring(ctxFor(home));
    const config = configInUse(readConfigFile(fileWith('version: "1"\n'), true));
    try {
      expect(() => wiring.createDecide({ policyPath: join(home, "policy.yml"), home, config })).not.toThrow();
      expect(wiring.createCredentials?.({ home, config })).toBeUndefined();
    } finally {
      await wiring.close();
    }
  });

  it("without one, reads and checks the home's config.yml: its bad keys stop it (exit 4)", async () => {
    const { home } = fixtureHome(root.dir);
    writeFileSync(join(home, "config.yml"), 'version: "1"\ncredentials: 7\n');
    const wiring = createProxyWiring(ctxFor(home));
    try {
      const { code, message } = failure(() => wiring.createAudit({ home }));
      expect(code).toBe(4);
      expect(message).toContain(`${join(home, "config.yml")}:2:14: \`credentials\` must be a list`);
    } finally {
      await wiring.close();
    }
  });
});

describe("configuredChannels: a channel secret's problems name the config file it came from", () => {
  it("a plain webhook.secret or telegram.bot_token in FILE is reported naming FILE, not config.yml", async () => {
    const seed = (): Promise<Uint8Array> => Promise.resolve(new Uint8Array(32).fill(3));
    for (const [text, key] of [
      ['channel: webhook\nwebhook:\n  url: "http://127.0.0.1:9/x"\n  secret: plain-hook\n', "webhook.secret"],
      ["channel: telegram\ntelegram:\n  chat_id: 42\n  bot_token: '123:plain'\n", "telegram.bot_token"],
    ] as const) {
      const path = fileWith(text);
      const lines: string[] = [];
      const [channel] = configuredChannels(readConfigFile(path, true), seed, (l) => void lines.push(l));
      expect(await channel?.isAvailable()).toBe(false);
      expect(lines.join("\n")).toContain(`\`${key}\` in ${path} is not sealed`);
      expect(lines.join("\n")).not.toContain("plain");
      await channel?.close?.();
    }
  });
});

describe("sandboxAllowEgress: acp run's `sandbox.allow_egress`", () => {
  it("returns the list, none without one, and names every bad entry at FILE:LINE:COL (exit 4)", () => {
    const good = readConfigFile(fileWith("sandbox:\n  allow_egress: [api.example.com:443, '*.example.org:*']\n"), true);
    expect(sandboxAllowEgress(good)).toEqual(["api.example.com:443", "*.example.org:*"]);
    expect(sandboxAllowEgress(readConfigFile(fileWith('version: "1"\n'), true))).toEqual([]);
    const bad = readConfigFile(
      fileWith("sandbox:\n  allow_egress:\n    - example.com\n    - ok.example:1\n    - x:0\n"),
      true,
    );
    const { code, message } = failure(() => sandboxAllowEgress(bad));
    expect(code).toBe(4);
    expect(message.split("\n")).toEqual([
      expect.stringMatching(new RegExp(`^${bad.path}:3:7: .*example\\.com`)),
      expect.stringMatching(new RegExp(`^${bad.path}:5:7: `)),
    ]);
    const notList = failure(() =>
      sandboxAllowEgress(readConfigFile(fileWith("sandbox:\n  allow_egress: a:1\n"), true)),
    );
    expect(notList.message).toMatch(/:2:17: `sandbox\.allow_egress` must be a list of HOST:PORT strings$/);
  });
});

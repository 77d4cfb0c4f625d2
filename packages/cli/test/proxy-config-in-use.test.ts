import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { CliContext } from "../src/context.js";
import { CliError } from "../src/exit-codes.js";
import { readConfigFile } from "../src/wiring/config-file.js";
import { configInUse } from "../src/wiring/config-in-use.js";
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
    for (const key of ["`channel`", "`credentials`", "redaction.colour", "invalid `session` settings"]) {
      expect(lines.find((l) => l.includes(key)) ?? `no line names ${key}`).toContain(path);
    }
  });

  it("a missing file has no keys: defaults, no credentials, the runtime's session defaults", () => {
    const config = configInUse(readConfigFile(join(root.dir, "none.yml"), false));
    expect(config.credentials).toEqual([]);
    expect(config.session).toEqual({});
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

  it("without one (acp run), reads and checks the home's config.yml: its bad keys stop it (exit 4)", async () => {
    const { home } = fixtureHome(root.dir);
    writeFileSync(join(home, "config.yml"), 'version: "1"\ncredentials: 7\n');
    const wiring = createProxyWiring(ctxFor(home));
    try {
      const { code, message } = failure(() => wiring.createAudit({ home }));
      expect(code).toBe(4);
      expect(message).toContain(`${join(home, "config.yml")}: \`credentials\` must be a list`);
    } finally {
      await wiring.close();
    }
  });
});

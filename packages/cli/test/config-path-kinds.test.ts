import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "./run.js";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";

// every command that takes --config, with arguments that reach the config read (claim serve stops there on
// each of these paths, so it never listens)
const COMMANDS: readonly (readonly [string, (config: string) => string[]])[] = [
  ["proxy", (c) => ["proxy", "--upstream", "true", "--config", c]],
  ["run", (c) => ["run", "--config", c, "--", "true"]],
  ["doctor", (c) => ["doctor", "--config", c]],
  ["policy simulate", (c) => ["policy", "simulate", "--tool", "x", "--config", c]],
  ["policy test", (c) => ["policy", "test", "--config", c, "cases.yml"]],
  ["claim serve", (c) => ["claim", "serve", "--config", c, "--port", "0"]],
  ["claim takedown", (c) => ["claim", "takedown", "--config", c, "abcdefghijklmnopqrstuvwxyz"]],
  ["claim reputation", (c) => ["claim", "reputation", "--config", c, "192.0.2.1"]],
];

describe("every --config takes a directory, a missing file, a FIFO and a huge file the same way", () => {
  const root = tempRoot("config-path-kinds");
  afterAll(root.cleanup);
  const { home } = fixtureHome(root.dir);
  // PATH: acp run looks its agent command up before anything else
  const env = { ...envFor(home), PATH: process.env["PATH"] ?? "" };
  const cwd = root.dir;
  mkdirSync(join(cwd, "plain-dir"));
  mkdirSync(join(home, "claim"));
  writeFileSync(join(home, "claim", "config.yml"), "admission:\n  mode: pow\n");
  writeFileSync(join(cwd, "huge.yml"), `# ${"x".repeat(2 * 1024 * 1024)}\n`);
  writeFileSync(join(cwd, "cases.yml"), "[]\n");
  // the words a command says, on stderr as `acp: …` or (doctor) on its failed config line
  const said = async (argv: string[]): Promise<{ code: number; text: string }> => {
    const out = await runCli(argv, { env, cwd });
    return { code: out.code, text: out.stdout + out.stderr };
  };

  it.each(COMMANDS)("%s --config DIR says it is a directory and what to give instead (exit 1)", async (_n, argv) => {
    const out = await said(argv("plain-dir"));
    expect(out.code).toBe(1);
    expect(out.text).toContain(`\`${join(cwd, "plain-dir")}\` is a directory, not a config file: name a YAML file (`);
    expect(out.text).not.toContain("not a file");
  });

  it.each(COMMANDS)("%s --config HOME names the file in it and ACP_HOME=HOME", async (name, argv) => {
    const out = await said(argv(home));
    expect(out.code).toBe(1);
    const file = name.startsWith("claim") ? join(home, "claim", "config.yml") : join(home, "config.yml");
    expect(out.text).toContain(
      `\`${home}\` is a directory, not a config file: name the file in it, \`${file}\`, or set ACP_HOME=${home} to use that home`,
    );
  });

  it.each(COMMANDS)("%s --config MISSING: cannot read, no such file (exit 1)", async (_n, argv) => {
    const out = await said(argv("missing.yml"));
    expect(out.code).toBe(1);
    expect(out.text).toContain(`cannot read \`${join(cwd, "missing.yml")}\`: no such file`);
  });

  it.each(COMMANDS)(
    "%s --config HUGE is refused before it is parsed (exit 4, or doctor's failed check)",
    async (name, argv) => {
      const out = await said(argv("huge.yml"));
      expect(out.code).toBe(name === "doctor" ? 1 : 4);
      expect(out.text).toContain(`\`${join(cwd, "huge.yml")}\` is larger than 1 MiB`);
    },
  );

  it.each(COMMANDS)(
    "%s --config /dev/zero (endless) is refused at 1 MiB, not read until memory runs out",
    async (name, argv) => {
      const out = await said(argv("/dev/zero"));
      expect(out.code).toBe(name === "doctor" ? 1 : 4);
      expect(out.text).toContain("`/dev/zero` is larger than 1 MiB");
    },
  );

  it.each(COMMANDS)(
    "%s --config FIFO reads what is written into it (as <(…) gives), the same reader",
    async (name, argv) => {
      const fifo = join(cwd, `fifo-${name.replace(/ /g, "-")}`);
      execFileSync("mkfifo", [fifo]);
      // a writer in another process: the read blocks this one until the writer opens the pipe
      const writer = spawn("sh", ["-c", 'printf "admission: [\\n  - x\\n" > "$1"', "sh", fifo], { stdio: "ignore" });
      const exited = new Promise((resolve) => writer.once("exit", resolve).once("error", resolve));
      const out = await said(argv(fifo));
      // a command that never opened the pipe would leave the writer waiting: end it either way
      if (writer.exitCode === null) writer.kill();
      await exited;
      expect(out.code).toBe(name === "doctor" ? 1 : 4);
      // a YAML error at its line and column: the text came through the pipe
      expect(out.text).toMatch(new RegExp(`${fifo}:\\d+:\\d+: `));
    },
  );
});

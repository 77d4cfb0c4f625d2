import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { credentialProblems, credentialRulesFrom } from "../src/wiring/credentials.js";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";
import { runCli } from "./run.js";

/**
 * A `credentials:` entry with no `server` goes to every upstream. With two or more upstreams that is a
 * secret handed to servers nobody chose for it, so `acp proxy` and `acp run` refuse to start (exit 4)
 * before any upstream runs; with one it is that upstream's, and a warning says what a second would do.
 */
const root = tempRoot("credentials-several-upstreams");
afterAll(root.cleanup);
let n = 0;

function configFile(credentials: string): string {
  const path = join(root.dir, `config-${++n}.yml`);
  writeFileSync(path, `version: "1"\ncredentials:\n${credentials}`);
  return path;
}

const NO_SERVER = "  - { secret: TOKEN, tool: t, argument: token }\n";

describe("a credential with no server, with several upstreams", () => {
  it('is a problem only from the second upstream on, and `server: "*"` is the person\'s own choice', () => {
    const rules = credentialRulesFrom(
      [
        { secret: "TOKEN", tool: "t", argument: "token" },
        { secret: "ALL", server: "*", tool: "t", argument: "key" },
        { secret: "GH", server: "github", tool: "t", argument: "key" },
      ],
      "config.yml",
    );
    expect(credentialProblems(rules, [])).toEqual([]);
    expect(credentialProblems(rules, ["github"])).toEqual([]);
    expect(credentialProblems(rules, ["github", "notes"])).toEqual([
      'config.yml: credentials.0 (`TOKEN`) names no `server`, and 2 upstreams are configured (`github`, `notes`): name the upstream(s) it is for (`server: github`), or write `server: "*"` if every one is meant',
    ]);
  });

  it("stops acp proxy at FILE:LINE:COL before any upstream starts (exit 4)", async () => {
    const { home } = fixtureHome(root.dir);
    const path = configFile(NO_SERVER);
    const started = [join(root.dir, `p-a-${n}`), join(root.dir, `p-b-${n}`)];
    const out = await runCli(
      ["proxy", "--config", path, "--upstream", `touch ${started[0]}`, "--upstream", `touch ${started[1]}`],
      { env: envFor(home) },
    );
    expect(out.code).toBe(4);
    expect(out.stderr).toContain(`${path}:3:5: credentials.0 (\`TOKEN\`) names no \`server\`, and 2 upstreams`);
    expect(started.filter((f) => existsSync(f))).toEqual([]);
  });

  it("stops acp run the same way before the agent or any upstream starts (exit 4)", async () => {
    const { home } = fixtureHome(root.dir);
    const path = configFile(NO_SERVER);
    const started = [join(root.dir, `r-a-${n}`), join(root.dir, `r-b-${n}`), join(root.dir, `r-agent-${n}`)];
    const out = await runCli(
      [
        "run",
        "--isolation",
        "none",
        "--config",
        path,
        "-u",
        `touch ${started[0]}`,
        "-u",
        `touch ${started[1]}`,
        "--",
        "touch",
        started[2] ?? "",
      ],
      // PATH: acp run looks its agent command up first (1a707be); the credentials check must still stop it
      { env: { ...envFor(home), PATH: process.env["PATH"] ?? "" } },
    );
    expect(out.code).toBe(4);
    expect(out.stderr).toContain(`${path}:3:5: credentials.0 (\`TOKEN\`) names no \`server\``);
    expect(started.filter((f) => existsSync(f))).toEqual([]);
  });

  it("is refused in the config file itself when its proxy.upstream_servers has two, and acp doctor says so", async () => {
    const { home } = fixtureHome(root.dir);
    const path = join(root.dir, `config-${++n}.yml`);
    writeFileSync(
      path,
      [
        'version: "1"',
        "proxy:",
        "  upstream_servers:",
        "    - { name: files, command: 'touch /nonexistent/never-started' }",
        "    - { name: notes, command: 'touch /nonexistent/never-started-2' }",
        "credentials:",
        NO_SERVER,
      ].join("\n"),
    );
    const out = await runCli(["doctor", "--json", "--config", path], { env: envFor(home) });
    const checks = (JSON.parse(out.stdout) as { checks: { status: string; name: string; detail: string }[] }).checks;
    const credentials = checks.find((c) => c.name === "credentials" && c.status === "fail");
    expect(credentials?.detail).toBe(
      `${path}:7:5: credentials.0 (\`TOKEN\`) names no \`server\`, and 2 upstreams are configured (\`files\`, \`notes\`): name the upstream(s) it is for (\`server: files\`), or write \`server: "*"\` if every one is meant`,
    );
    const proxy = await runCli(["proxy", "--config", path], { env: envFor(home) });
    expect(proxy.code).toBe(4);
    expect(proxy.stderr).toContain(`${path}:7:5: credentials.0`);
  });

  it('lets two upstreams start when the entry says `server: "*"` (the refusal is about the missing key)', async () => {
    const { home } = fixtureHome(root.dir);
    const path = configFile('  - { secret: TOKEN, server: "*", tool: t, argument: token }\n');
    const started = [join(root.dir, `s-a-${n}`), join(root.dir, `s-b-${n}`)];
    const out = await runCli(
      ["proxy", "--config", path, "--upstream", `touch ${started[0]}`, "--upstream", `touch ${started[1]}`],
      { env: envFor(home) },
    );
    // both commands ran (and, being no MCP servers, failed to connect: exit 1, not the config's exit 4)
    expect(out.code).toBe(1);
    expect(out.stderr).not.toContain("names no `server`");
    expect(started.filter((f) => existsSync(f))).toEqual(started);
  });
});

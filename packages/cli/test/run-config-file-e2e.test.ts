/**
 * `acp run --config FILE` takes every config key from FILE, like `acp proxy --config FILE`: `credentials:`,
 * `graph:` (and `session:`, `redaction:`, the consent channel, checked the same way), never from
 * `$ACP_HOME/config.yml`, which here holds different, valid values for the same keys. The built `acp` runs
 * as root (network namespace picked by auto); an MCP SDK client inside calls `echo` over HTTP.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "./run.js";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const ACP = join(ROOT, "packages/cli/bin/acp.js");
const MCP_CLIENT = join(ROOT, "packages/proxy/test/sandbox/fixtures/mcp-client.mjs");
const EVERYTHING = join(ROOT, "node_modules/.bin/mcp-server-everything");
const FILE_CANARY = "canary-run-file-5c2e-value";
const HOME_CANARY = "canary-run-home-77ab-value";
const BLOCK_ECHO = "graph:\n  mapping:\n    - { tool: echo, domain: email, action: send_to_unknown }";

const root = tempRoot("run-config-file");
let home = "";
let env: Record<string, string> = {};

function config(name: string, lines: string[]): string {
  const path = join(root.dir, name);
  writeFileSync(path, ['version: "1"', ...lines, ""].join("\n"));
  return path;
}

/** `acp run [--config FILE] -u everything -- node mcp-client OUT http`: status, stderr and what the client saw. */
function acpRun(file: string | null, runHome = home) {
  // the agent works in a directory of its own: the config files beside it, in root.dir, are out of its reach
  // (acp run refuses a --config the agent could change)
  const cwd = join(root.dir, "agent");
  mkdirSync(cwd, { recursive: true });
  const out = join(cwd, `out-${Math.random().toString(36).slice(2)}.json`);
  const args = ["run", ...(file !== null ? ["--config", file] : []), "-u", EVERYTHING, "-n", "everything"];
  const r = spawnSync(process.execPath, [ACP, ...args, "--", process.execPath, MCP_CLIENT, out, "http"], {
    encoding: "utf8",
    cwd,
    env: { PATH: process.env["PATH"] ?? "", ...envFor(runHome) },
    timeout: 90_000,
  });
  const seen = existsSync(out) ? (JSON.parse(readFileSync(out, "utf8")) as Record<string, unknown>) : {};
  return { status: r.status, stderr: r.stderr, echo: JSON.stringify(seen["echo"] ?? seen["error"] ?? null) };
}

beforeAll(async () => {
  execFileSync("npx", ["tsc", "-b", "packages/cli"], { cwd: ROOT, stdio: "ignore" });
  ({ home } = fixtureHome(root.dir));
  env = envFor(home);
  copyFileSync(join(ROOT, "spec/examples/consent-graph.json"), join(home, "consent-graph.json"));
  writeFileSync(join(home, "policy.yml"), 'version: "1"\ndefault_action: allow\n');
  expect((await runCli(["vault", "set", "FILE_TOKEN"], { env, stdin: `${FILE_CANARY}\n` })).code).toBe(0);
  expect((await runCli(["vault", "set", "HOME_TOKEN"], { env, stdin: `${HOME_CANARY}\n` })).code).toBe(0);
  // the home's config: valid; it blocks echo through the graph and injects HOME_TOKEN
  writeFileSync(
    join(home, "config.yml"),
    `version: "1"\n${BLOCK_ECHO}\ncredentials:\n  - { secret: HOME_TOKEN, server: everything, tool: echo, argument: message }\n`,
  );
}, 120_000);

afterAll(() => root.cleanup());

describe("acp run --config FILE: every config key comes from FILE", () => {
  it("without --config, the home's config.yml is in use: its graph mapping refuses echo", () => {
    const r = acpRun(null);
    expect(r.stderr).toContain("isolation netns");
    expect(r.echo).toContain("graph:email.send_to_unknown");
  });

  it("injects the vault entry FILE's `credentials:` names; the home's graph and credentials are not used", () => {
    const file = config("credentials.yml", [
      "credentials:\n  - { secret: FILE_TOKEN, server: everything, tool: echo, argument: message }",
    ]);
    const r = acpRun(file);
    expect(r.status, r.stderr).toBe(0);
    expect(r.echo).toContain("[REDACTED]");
    expect(r.echo).not.toContain("graph:");
    expect(r.echo).not.toContain(FILE_CANARY);
    const audit = readFileSync(join(home, "audit.jsonl"), "utf8");
    expect(audit).toContain("FILE_TOKEN");
    expect(audit).not.toContain("HOME_TOKEN");
  });

  it("FILE's `graph:` mapping places echo in the home's consent graph, which blocks it", () => {
    const r = acpRun(config("graph.yml", [BLOCK_ECHO]));
    expect(r.status, r.stderr).toBe(0);
    expect(r.echo).toContain("graph:email.send_to_unknown");
  });

  it("bad keys in FILE stop acp run before the agent starts (exit 4, every problem named with FILE)", () => {
    const file = config("bad.yml", [
      "credentials: 7",
      "channel: carrier-pigeon",
      "graph:\n  threshold: 2",
      "sandbox:\n  allow_egress: example.com:443",
    ]);
    const r = acpRun(file);
    expect(r.status).toBe(4);
    const lines = r.stderr.split("\n");
    for (const key of ["`credentials`", "`channel`", "graph.threshold", "sandbox.allow_egress"]) {
      expect(lines.find((l) => l.includes(key)) ?? `no line names ${key}`).toContain(file);
    }
    expect(r.stderr).not.toContain("isolation");
  });

  it("a home config.yml with bad keys does not matter under --config FILE", () => {
    const other = fixtureHome(root.dir).home;
    writeFileSync(join(other, "policy.yml"), 'version: "1"\ndefault_action: allow\n');
    writeFileSync(join(other, "config.yml"), 'version: "1"\ncredentials: 7\nchannel: carrier-pigeon\n');
    expect(acpRun(null, other).status).toBe(4);
    const r = acpRun(config("good.yml", ["channel: prompt"]), other);
    expect(r.status, r.stderr).toBe(0);
    expect(r.echo).toContain("hello over http");
  });
});

import { execFile } from "node:child_process";
import { existsSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";
import { freshHome, serveFailure, startServe } from "./serve-fixture.js";

/**
 * `defaults.policy` of config.yml names the policy every command uses (consent protocol §8.1): `--policy FILE`
 * wins, then `defaults.policy` (relative: from the home), then the home's policy.yml. A file it names that is
 * missing stops the command before anything starts, never a fall-back to another policy.
 */

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const ACP = join(ROOT, "packages/cli/bin/acp.js");
const EVERYTHING = join(ROOT, "node_modules/.bin/mcp-server-everything");
const run = promisify(execFile);

const ALLOWS =
  'version: "1"\ndefault_action: allow\nrules:\n  - id: echo-allowed\n    match: { tool: echo }\n    action: allow\n';
const DENIES =
  'version: "1"\ndefault_action: allow\nrules:\n  - id: echo-denied\n    match: { tool: echo }\n    action: deny\n';

const configWith = (policy: string): string => `version: "1"\ndefaults:\n  policy: ${policy}\n`;

/** Every file and directory under `dir`, sorted. */
function tree(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" }).sort();
}

describe("acp serve: defaults.policy picks the policy", () => {
  interface Decided {
    route: string;
    rule: string | null;
  }
  async function decideOnce(home: string, args: string[] = [], env: Record<string, string> = {}): Promise<Decided> {
    const s = startServe(home, ["--port", "0", ...args], env);
    const ready = await Promise.race([
      s.ready,
      s.done.then(() => {
        throw new Error(`acp serve stopped: ${s.output().stderr}`);
      }),
    ]);
    try {
      const res = await fetch(`${ready.url}/v1/decide`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ tool: "echo", arguments: { message: "hi" } }),
      });
      return ((await res.json()) as { decision: Decided }).decision;
    } finally {
      s.stop();
      await s.done;
    }
  }

  it("refuses what the home's policy.yml allows when defaults.policy names a stricter file (relative: from the home)", async () => {
    const home = freshHome();
    writeFileSync(join(home, "policy.yml"), ALLOWS);
    writeFileSync(join(home, "strict.yml"), DENIES);
    expect(await decideOnce(home)).toMatchObject({ route: "accept", rule: "policy:echo-allowed" });
    writeFileSync(join(home, "config.yml"), configWith("strict.yml"));
    expect(await decideOnce(home)).toMatchObject({ route: "refuse", rule: "policy:echo-denied" });
  });

  it("expands ~ and $HOME at the start of defaults.policy", async () => {
    const home = freshHome();
    writeFileSync(join(home, "policy.yml"), ALLOWS);
    writeFileSync(join(home, "strict.yml"), DENIES);
    writeFileSync(join(home, "config.yml"), configWith('"~/strict.yml"'));
    expect(await decideOnce(home, [], { HOME: home })).toMatchObject({ route: "refuse" });
    writeFileSync(join(home, "config.yml"), configWith('"$HOME/strict.yml"'));
    expect(await decideOnce(home, [], { HOME: home })).toMatchObject({ route: "refuse" });
  });

  it("--policy FILE wins over defaults.policy", async () => {
    const home = freshHome();
    writeFileSync(join(home, "strict.yml"), DENIES);
    writeFileSync(join(home, "allows.yml"), ALLOWS);
    writeFileSync(join(home, "config.yml"), configWith("strict.yml"));
    expect(await decideOnce(home, ["--policy", join(home, "allows.yml")])).toMatchObject({ route: "accept" });
  });

  it("refuses to start when defaults.policy names a missing file, and creates nothing", async () => {
    const home = freshHome();
    writeFileSync(join(home, "config.yml"), configWith("missing.yml"));
    const before = tree(home);
    const failure = await serveFailure(home, ["--port", "0"]);
    expect(failure?.exitCode).toBe(1);
    expect(failure?.message).toContain(`cannot read policy \`${join(home, "missing.yml")}\``);
    expect(failure?.message).toContain("defaults.policy");
    expect(tree(home)).toEqual(before);
  });

  it("refuses a defaults.policy that is not a path at FILE:LINE:COL (exit 4)", async () => {
    const home = freshHome();
    writeFileSync(join(home, "config.yml"), configWith("[a, b]"));
    const failure = await serveFailure(home, ["--port", "0"]);
    expect(failure?.exitCode).toBe(4);
    expect(failure?.message).toContain(`${join(home, "config.yml")}:3:11: \`defaults.policy\` must be the path`);
  });
});

describe("acp proxy: defaults.policy picks the policy", () => {
  const root = tempRoot("policy-path");

  beforeAll(async () => {
    if (!existsSync(join(ROOT, "packages/cli/dist/wiring/policy-path.js"))) {
      await run("npx", ["tsc", "-b", "packages/cli"], { cwd: ROOT }).catch(() => undefined);
    }
  }, 120_000);

  afterAll(() => root.cleanup());

  async function echoOutcome(home: string, args: string[] = []): Promise<string> {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [ACP, "proxy", "--upstream", EVERYTHING, "-n", "everything", ...args],
      env: { PATH: process.env["PATH"] ?? "", ...envFor(home) },
      stderr: "pipe",
    });
    const client = new Client({ name: "policy-path-agent", version: "1.0.0" });
    await client.connect(transport);
    try {
      const result = await client.callTool({ name: "echo", arguments: { message: "hi" } });
      return result.isError === true ? (/"rule":"([^"]+)"/.exec(JSON.stringify(result))?.[1] ?? "error") : "accepted";
    } finally {
      await client.close();
    }
  }

  it("refuses what the home's policy.yml allows when defaults.policy names a stricter file; --policy wins", async () => {
    const { home } = fixtureHome(root.dir);
    writeFileSync(join(home, "policy.yml"), ALLOWS);
    writeFileSync(join(home, "strict.yml"), DENIES);
    writeFileSync(join(home, "allows.yml"), ALLOWS);
    writeFileSync(join(home, "config.yml"), configWith("strict.yml"));
    expect(await echoOutcome(home)).toBe("policy:echo-denied");
    expect(await echoOutcome(home, ["--policy", join(home, "allows.yml")])).toBe("accepted");
  }, 60_000);

  it("refuses to start when defaults.policy names a missing file, and creates nothing", async () => {
    const { home } = fixtureHome(root.dir);
    writeFileSync(join(home, "config.yml"), configWith("missing.yml"));
    const before = tree(home);
    const failed = await run(process.execPath, [ACP, "proxy", "--upstream", EVERYTHING, "-n", "everything"], {
      env: { PATH: process.env["PATH"] ?? "", ...envFor(home) },
    }).then(
      () => null,
      (e: unknown) => e as { code: number; stderr: string },
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stderr).toContain(`cannot read policy \`${join(home, "missing.yml")}\``);
    expect(tree(home)).toEqual(before);
  }, 60_000);

  it("runs on no starter policy when --policy names the home's own policy.yml and it is missing", async () => {
    const { home } = fixtureHome(root.dir);
    writeFileSync(join(home, "config.yml"), 'version: "1"\n');
    rmSync(join(home, "policy.yml"));
    const args = [ACP, "proxy", "--upstream", EVERYTHING, "-n", "everything", "--policy", join(home, "policy.yml")];
    const failed = await run(process.execPath, args, {
      env: { PATH: process.env["PATH"] ?? "", ...envFor(home) },
    }).then(
      () => null,
      (e: unknown) => e as { code: number; stderr: string },
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stderr).toContain(`cannot read policy \`${join(home, "policy.yml")}\`: no such file`);
  }, 60_000);
});

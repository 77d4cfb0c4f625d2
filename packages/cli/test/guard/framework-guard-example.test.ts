import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { beforeAll, afterAll, describe, expect, it } from "vitest";
import { envFor, fixtureHome, tempRoot } from "../home-fixture.js";
import { runCli } from "../run.js";

const ROOT = fileURLToPath(new URL("../../../../", import.meta.url));
const AGENT = join(ROOT, "examples/framework-guard/agent.mjs");
const TOKEN = "tok_live_canary_7c41_framework_guard";

interface Step {
  readonly tool: string;
  readonly args: Record<string, unknown>;
  readonly ok: boolean;
  readonly result: unknown;
  readonly stop?: string;
}

describe("examples/framework-guard: an agent loop with tools wrapped by openGuard", () => {
  const root = tempRoot("framework-guard");
  let home = "";
  let steps: Step[] = [];

  beforeAll(async () => {
    // the example imports @acp/cli as a user would: the built package
    if (!existsSync(join(ROOT, "packages/cli/dist/guard/index.js"))) {
      await promisify(execFile)("npx", ["tsc", "-b", "packages/cli"], { cwd: ROOT });
    }
    ({ home } = fixtureHome(root.dir));
    const env = envFor(home);
    expect((await runCli(["vault", "set", "BANK_TOKEN"], { env, stdin: `${TOKEN}\n` })).code).toBe(0);
    const { stdout } = await promisify(execFile)(process.execPath, [AGENT, "--json"], {
      cwd: ROOT,
      env: { PATH: process.env["PATH"] ?? "", ...env, EXAMPLE_WORLD: root.dir },
    });
    steps = (JSON.parse(stdout) as { steps: Step[] }).steps;
  }, 120_000);

  afterAll(() => root.cleanup());

  it("runs the benign steps: the inbox is read, the bill paid, the user's summary sent", () => {
    expect(steps.map((s) => [s.tool, s.ok])).toEqual([
      ["read_inbox", true],
      ["send_email", false],
      ["pay", true],
      ["send_email", true],
    ]);
    const outbox = readFileSync(join(root.dir, "outbox.jsonl"), "utf8").trim().split("\n");
    expect(outbox.map((l) => (JSON.parse(l) as { to: string }).to)).toEqual(["me@example.com"]);
  });

  it("stops the injected send: it is asked, the person says no, and nothing reaches the attacker", () => {
    const injected = steps[1];
    expect(injected?.args["to"]).toBe("mark@attacker.example");
    expect(injected?.stop).toBe("denied");
    expect(injected?.result).toMatch(/^denied by a person: /);
    expect(readFileSync(join(root.dir, "outbox.jsonl"), "utf8")).not.toContain("attacker.example");
  });

  it("the bank receives the vault token; the agent's result and the audit never hold it", () => {
    expect(readFileSync(join(root.dir, "bank.jsonl"), "utf8")).toContain(TOKEN);
    expect(JSON.stringify(steps)).not.toContain(TOKEN);
    expect(JSON.stringify(steps[2]?.result)).toContain("Bearer [REDACTED]");
    expect(readFileSync(join(home, "audit.jsonl"), "utf8")).not.toContain(TOKEN);
  });

  it("every step is in the home's audit chain, which `acp audit verify` finds intact", async () => {
    const audit = readFileSync(join(home, "audit.jsonl"), "utf8");
    for (const type of ["policy_evaluated", "consent_requested", "consent_denied", "credential_injected"]) {
      expect(audit).toContain(`"event_type":"${type}"`);
    }
    const verified = await runCli(["audit", "verify"], { env: envFor(home) });
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
  });
});

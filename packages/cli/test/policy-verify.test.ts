import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runCli } from "./run.js";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const examples = join(root, "examples/verify");

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "acp-verify-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Example {
  readonly name: string;
  readonly intent?: string;
  readonly session?: boolean;
  /** The bound to check with (default 3). */
  readonly depth?: number;
  /** The invariants it breaks, in report order. */
  readonly broken: readonly string[];
}

const WRONG: readonly Example[] = [
  { name: "accepts-send", broken: ["untrusted_read_then_send"] },
  { name: "send-classified-as-read", broken: ["untrusted_to_consequential", "untrusted_read_then_send"] },
  { name: "intent-allows-all", session: true, depth: 2, broken: ["untrusted_read_then_send"] },
  { name: "missing-transition", session: true, broken: ["untrusted_read_then_send"] },
  { name: "approved-read", broken: ["untrusted_read_then_send"] },
];

function filesOf(example: Example): string[] {
  const base = join(examples, example.name);
  const args = ["--policy", join(base, "policy.yml"), "--intent", join(base, example.intent ?? "intent.json")];
  return example.session === true ? [...args, "--session-settings", join(base, "session.yml")] : args;
}

interface JsonReport {
  outcome: string;
  complete: boolean;
  invariants: { id: string; holds: boolean | null; route?: string; counterexample?: Record<string, unknown>[] }[];
}

describe("acp policy verify", () => {
  it("verifies the correct example: every invariant holds within the bound, exit 0", async () => {
    const good = { name: "good", session: true, broken: [] };
    const out = await runCli(["policy", "verify", ...filesOf(good), "--depth", "3"]);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain("ok untrusted_read_then_send");
    expect(out.stdout).toContain("4 of 4 invariants hold within 3 calls");
    expect(out.stderr).toBe("verified: every invariant holds for every session of up to 3 calls\n");
  });

  it("verifies the same policy and settings once the intent names only what the goal needs", async () => {
    const narrow = { name: "intent-allows-all", intent: "intent-narrow.json", session: true, broken: [] };
    const out = await runCli(["policy", "verify", ...filesOf(narrow), "--depth", "3"]);
    expect(out.code).toBe(0);
  });

  for (const example of WRONG) {
    it(`finds ${example.broken.join(" and ")} in examples/verify/${example.name}, and replay shows the bad route`, async () => {
      const cex = join(dir, `${example.name}.jsonl`);
      const depth = String(example.depth ?? 3);
      const out = await runCli(["policy", "verify", ...filesOf(example), "--depth", depth, "--json", "--out", cex]);
      expect(out.code).toBe(3);
      const report = JSON.parse(out.stdout) as JsonReport;
      expect(report.outcome).toBe("violated");
      const broken = report.invariants.filter((i) => i.holds === false).map((i) => i.id);
      expect(broken).toEqual(example.broken);
      const first = report.invariants.find((i) => i.id === example.broken[0]);
      expect(first?.route).toBe("accept");
      const written = readFileSync(cex, "utf8");
      expect(
        written
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l) as unknown),
      ).toEqual(first?.counterexample);

      const replay = await runCli(["replay", "--approve-asks", ...filesOf(example), cex]);
      expect(replay.code).toBe(0);
      const calls = replay.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as { tool: string; route: string });
      const last = first?.counterexample?.at(-1);
      expect(calls.at(-1)).toMatchObject({ tool: last?.["tool"], route: "accept" });
    });
  }

  it("prints the counterexample as replay lines and says how to replay it", async () => {
    const example = WRONG[0] as Example;
    const cex = join(dir, "human.jsonl");
    const out = await runCli(["policy", "verify", ...filesOf(example), "--depth", "2", "--out", cex]);
    expect(out.code).toBe(3);
    expect(out.stdout).toContain("FAIL untrusted_read_then_send: `mail.send_email` (communication) was accepted after");
    expect(out.stdout).toContain('  {"type":"tool_call","server":"mail","tool":"search_emails","args":{}}');
    expect(out.stdout).toContain(`acp replay --approve-asks --policy ${join(examples, "accepts-send/policy.yml")}`);
  });

  it("explores approved questions: a send after a read a person approved is found, and missed with --decline-asks", async () => {
    const example = { name: "approved-read", broken: [] };
    const cex = join(dir, "approved.jsonl");
    const out = await runCli(["policy", "verify", ...filesOf(example), "--depth", "2", "--out", cex]);
    expect(out.code).toBe(3);
    const approved = await runCli(["replay", "--approve-asks", ...filesOf(example), cex]);
    const routes = (text: string): string[] =>
      text
        .trim()
        .split("\n")
        .map((l) => (JSON.parse(l) as { route: string }).route);
    expect(routes(approved.stdout)).toEqual(["ask", "accept"]);
    expect(readFileSync(cex, "utf8")).toContain('"server":"web","tool":"get_webpage"');
    const declined = await runCli(["policy", "verify", ...filesOf(example), "--depth", "2", "--decline-asks"]);
    expect(declined.code).toBe(0);
  });

  it("acp replay --approve-asks executes an asked call, so a later transition rule sees it", async () => {
    const session = join(dir, "guard.yml");
    writeFileSync(session, 'transitions:\n  - "read -> communication: ask"\n');
    const trace = join(dir, "asked-read.jsonl");
    const events = [
      { type: "user_input", text: "visa rules please" },
      { type: "tool_call", server: "web", tool: "get_webpage", args: {} },
      { type: "tool_result", server: "web", tool: "get_webpage", content: "visa rules" },
      { type: "tool_call", server: "mail", tool: "send_email", args: { to: "jane@home.example" } },
    ];
    writeFileSync(trace, events.map((e) => JSON.stringify(e)).join("\n"));
    const args = [...filesOf({ name: "approved-read", broken: [] }), "--session-settings", session, trace];
    const routes = (text: string): string[] =>
      text
        .trim()
        .split("\n")
        .map((l) => (JSON.parse(l) as { route: string }).route);
    expect(routes((await runCli(["replay", ...args])).stdout)).toEqual(["ask", "accept"]);
    expect(routes((await runCli(["replay", "--approve-asks", ...args])).stdout)).toEqual(["ask", "ask"]);
  });

  it("warns when the intent admits actions nobody named, and not otherwise", async () => {
    const wide = { name: "intent-allows-all", session: true, broken: [] };
    const out = await runCli(["policy", "verify", ...filesOf(wide), "--depth", "1"]);
    expect(out.stderr).toContain("warning: the intent (`*`) allows `other.other_tool`, an action nothing names");
    const narrow = { ...wide, intent: "intent-narrow.json" };
    const quiet = await runCli(["policy", "verify", ...filesOf(narrow), "--depth", "1"]);
    expect(quiet.stderr).not.toContain("warning:");
  });

  it("puts an untrusted value in the counterexample of untrusted_to_consequential", async () => {
    const example = WRONG[1] as Example;
    const out = await runCli(["policy", "verify", ...filesOf(example), "--depth", "2", "--json"]);
    const report = JSON.parse(out.stdout) as JsonReport;
    const taint = report.invariants.find((i) => i.id === "untrusted_to_consequential");
    expect(taint?.counterexample?.at(-1)).toMatchObject({ args: { to: "mallory@attacker.example" } });
  });

  it("refuses an intent that contradicts the policy: exit 4, FILE:LINE:COL, nothing explored", async () => {
    const intent = join(examples, "contradiction/intent.json");
    const out = await runCli([
      "policy",
      "verify",
      "--policy",
      join(examples, "contradiction/policy.yml"),
      "--intent",
      intent,
    ]);
    expect(out.code).toBe(4);
    expect(out.stdout).toBe("");
    expect(out.stderr).toContain(
      `${intent}:3:47: the intent allows \`mail.send_email\` but the policy refuses it outright (rule \`no-mail\`)`,
    );
  });

  it("reports a malformed intent with its line and column, exit 4", async () => {
    const policy = join(examples, "good/policy.yml");
    const broken = join(dir, "broken-intent.yml");
    writeFileSync(
      broken,
      'goal: "What is on my calendar today?"\nallowed_actions:\n  - calendar.read_events\n  - [unclosed\n',
    );
    const syntax = await runCli(["policy", "verify", "--policy", policy, "--intent", broken]);
    expect(syntax.code).toBe(4);
    expect(syntax.stderr).toMatch(/broken-intent\.yml:5:1: invalid intent: not JSON or YAML/);
    const schema = join(examples, "malformed/intent-schema.yml");
    const invalid = await runCli(["policy", "verify", "--policy", policy, "--intent", schema]);
    expect(invalid.code).toBe(4);
    expect(invalid.stderr).toContain(`${schema}:5:14: `);
  });

  it("reports a malformed policy and malformed session settings with line and column, exit 4", async () => {
    const policy = join(dir, "bad-policy.yml");
    writeFileSync(policy, 'version: "1"\ndefault_action: alow\nrules: []\n');
    const intent = join(examples, "good/intent.json");
    const out = await runCli(["policy", "verify", "--policy", policy, "--intent", intent]);
    expect(out.code).toBe(4);
    expect(out.stderr).toContain(`${policy}:2:17: `);
    const session = join(dir, "bad-session.yml");
    writeFileSync(session, "transitions:\n  - from: read\n    to: communication\n    action: allow\n");
    const good = join(examples, "good/policy.yml");
    const bad = await runCli(["policy", "verify", "--policy", good, "--intent", intent, "--session-settings", session]);
    expect(bad.code).toBe(4);
    expect(bad.stderr).toMatch(new RegExp(`${session.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:4:\\d+: `));
  });

  it("stops a model larger than --max-states with a message and exit 1, never claiming it verified", async () => {
    const good = { name: "good", session: true, broken: [] };
    const out = await runCli(["policy", "verify", ...filesOf(good), "--max-states", "3"]);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain("the model is too large: more than 3 states within 4 calls, so nothing is verified");
    expect(out.stderr).not.toContain("verified: every invariant");
    expect(out.stdout).toContain("stopped unfinished");
    const json = await runCli(["policy", "verify", ...filesOf(good), "--max-states", "3", "--json"]);
    expect(json.code).toBe(1);
    const report = JSON.parse(json.stdout) as JsonReport;
    expect(report.outcome).toBe("too_large");
    expect(report.invariants.every((i) => i.holds === null)).toBe(true);
  });

  it("refuses a model with more actions than it can check: exit 1, nothing explored", async () => {
    const intent = join(dir, "huge-intent.json");
    const names = Array.from({ length: 70 }, (_, i) => `files.read_${i}`);
    writeFileSync(intent, JSON.stringify({ goal: "read everything", allowed_actions: names }));
    const out = await runCli(["policy", "verify", "--policy", join(examples, "good/policy.yml"), "--intent", intent]);
    expect(out.code).toBe(1);
    expect(out.stdout).toBe("");
    expect(out.stderr).toContain("the model has 72 actions, more than the 64 it can check");
  });

  it("rejects a bad --depth as a usage error", async () => {
    const good = { name: "good", session: true, broken: [] };
    const out = await runCli(["policy", "verify", ...filesOf(good), "--depth", "0"]);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain("--depth: expected a whole number from 1 to 8, got `0`");
  });

  it("teaches with --help: the invariants, exit codes and examples", async () => {
    const out = await runCli(["policy", "verify", "--help"]);
    expect(out.code).toBe(0);
    for (const text of [
      "untrusted_read_then_send",
      "Exit codes:",
      "Examples:",
      "acp replay --approve-asks --policy",
      "--max-states",
    ]) {
      expect(out.stdout).toContain(text);
    }
  });
});

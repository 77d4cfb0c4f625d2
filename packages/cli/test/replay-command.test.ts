import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runCli } from "./run.js";

const fixtures = fileURLToPath(new URL("./replay/fixtures/", import.meta.url));
const policy = join(fixtures, "policy.yml");

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "acp-replay-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function lines(stdout: string): Record<string, unknown>[] {
  return stdout
    .trim()
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe("acp replay", () => {
  it("prints one JSON line per tool call and a summary, exit 0 whatever the routes", async () => {
    const out = await runCli(["replay", "--policy", policy, "basic.jsonl"], { cwd: fixtures });
    expect(out.code).toBe(0);
    const calls = lines(out.stdout);
    expect(calls.map((c) => [c["trace"], c["index"], c["server"], c["tool"], c["route"]])).toEqual([
      ["basic.jsonl", 1, "calendar", "read_events", "accept"],
      ["basic.jsonl", 3, "bank", "transfer_money", "refuse"],
      ["basic.jsonl", 5, "mail", "send_email", "ask"],
    ]);
    expect(Object.keys(calls[0] ?? {})).toEqual(["trace", "index", "server", "tool", "route", "reasons"]);
    // without --intent the session runs an open stand-in intent: it claims no intent and no plan
    expect(calls[1]?.["reasons"]).toEqual([expect.objectContaining({ source: "policy", rule: "no-money" }) as unknown]);
    expect(out.stderr).toBe("replayed 1 trace, 3 calls: 1 accept, 1 ask, 0 defer, 1 refuse\n");
  });

  it("says a call is within the intent only when an intent was given, and never claims a plan", async () => {
    const intent = join(dir, "intent.json");
    writeFileSync(intent, JSON.stringify({ goal: "read my calendar", allowed_actions: ["calendar.read_*"] }));
    const out = await runCli(["replay", "--policy", policy, "--intent", intent, "basic.jsonl"], { cwd: fixtures });
    expect(out.code).toBe(0);
    const read = lines(out.stdout).find((c) => c["tool"] === "read_events");
    expect(read?.["reasons"]).toContainEqual(
      expect.objectContaining({ source: "session", code: "session_ok", message: "within the intent" }),
    );
    expect(out.stdout).not.toContain("approved plan");
  });

  it("with --json prints the summary as a JSON line on stdout", async () => {
    const out = await runCli(["replay", "--json", "--policy", policy, "basic.jsonl", "basic.jsonl"], { cwd: fixtures });
    expect(out.code).toBe(0);
    const all = lines(out.stdout);
    expect(all).toHaveLength(7);
    expect(all[6]).toEqual({ summary: { traces: 2, calls: 6, routes: { accept: 2, ask: 2, defer: 0, refuse: 2 } } });
    expect(out.stderr).toBe("");
  });

  it("exits 4 naming file:line for an unknown event type, and replays nothing", async () => {
    const good = join(dir, "good.jsonl");
    writeFileSync(good, '{"type":"tool_call","server":"s","tool":"read_x","args":{}}\n');
    writeFileSync(join(dir, "bad.jsonl"), '{"type":"user_input","text":"a"}\n{"type":"tool_output","server":"s"}\n');
    const out = await runCli(["replay", "--policy", policy, good, "bad.jsonl"], { cwd: dir });
    expect(out.code).toBe(4);
    expect(out.stdout).toBe("");
    expect(out.stderr).toContain("bad.jsonl:2: unknown event type `tool_output`");
  });

  it("exits 4 naming file:line for a malformed JSON line", async () => {
    writeFileSync(join(dir, "t.jsonl"), '{"type":"user_input","text":"a"}\n\n{"type":\n');
    const out = await runCli(["replay", "--policy", policy, "t.jsonl"], { cwd: dir });
    expect(out.code).toBe(4);
    expect(out.stderr).toMatch(/t\.jsonl:3: malformed JSON: /);
  });

  it("exits 4 for a file over the size limit without reading it", async () => {
    const big = join(dir, "big.jsonl");
    writeFileSync(big, "");
    truncateSync(big, 16 * 1024 * 1024 + 1);
    const out = await runCli(["replay", "--policy", policy, "big.jsonl"], { cwd: dir });
    expect(out.code).toBe(4);
    expect(out.stderr).toContain("big.jsonl: the trace is 16777217 bytes, more than the 16777216-byte limit");
  });

  it("exits 4 for a trace that is not UTF-8", async () => {
    writeFileSync(join(dir, "t.jsonl"), Buffer.from([0x7b, 0xff, 0xfe, 0x7d, 0x0a]));
    const out = await runCli(["replay", "--policy", policy, "t.jsonl"], { cwd: dir });
    expect(out.code).toBe(4);
    expect(out.stderr).toContain("t.jsonl: the trace is not valid UTF-8");
  });

  it("exits 1 for a missing trace file", async () => {
    const out = await runCli(["replay", "--policy", policy, "nope.jsonl"], { cwd: dir });
    expect(out.code).toBe(1);
    expect(out.stderr).toContain("cannot read trace `nope.jsonl`: no such file");
  });

  it("exits 1 for a missing policy file", async () => {
    const out = await runCli(["replay", "--policy", "nope.yml", join(fixtures, "basic.jsonl")], { cwd: dir });
    expect(out.code).toBe(1);
    expect(out.stderr).toContain("cannot read policy `" + join(dir, "nope.yml") + "`: no such file");
  });

  it("exits 4 for an invalid policy", async () => {
    writeFileSync(join(dir, "p.yml"), 'version: "1"\nrules:\n  - action: alow\n');
    const out = await runCli(["replay", "--policy", "p.yml", join(fixtures, "basic.jsonl")], { cwd: dir });
    expect(out.code).toBe(4);
    expect(out.stderr).toContain("unknown action `alow`");
  });

  it("exits 2 without a trace or without --policy", async () => {
    expect((await runCli(["replay", "--policy", policy])).code).toBe(2);
    expect((await runCli(["replay", join(fixtures, "basic.jsonl")])).code).toBe(2);
  });

  it("exits 4 listing the problems of an invalid intent, and 1 for a missing one", async () => {
    writeFileSync(join(dir, "intent.json"), '{"goal":"x","allowed_actions":"all"}');
    const trace = join(fixtures, "basic.jsonl");
    const bad = await runCli(["replay", "--policy", policy, "--intent", "intent.json", trace], { cwd: dir });
    expect(bad.code).toBe(4);
    expect(bad.stdout).toBe("");
    // at the line and column of the value, as `acp intent set` prints it
    expect(bad.stderr).toContain(
      "invalid intent or session settings:\nintent.json:1:31: intent at `allowed_actions`: must be array",
    );
    const missing = await runCli(["replay", "--policy", policy, "--intent", "nope.json", trace], { cwd: dir });
    expect(missing.code).toBe(1);
  });

  it("exits 4 for invalid session settings, naming the unknown key", async () => {
    writeFileSync(join(dir, "s.yml"), "# settings\ntransitons: []\n");
    const out = await runCli(
      ["replay", "--policy", policy, "--session-settings", "s.yml", join(fixtures, "basic.jsonl")],
      {
        cwd: dir,
      },
    );
    expect(out.code).toBe(4);
    expect(out.stderr).toContain("s.yml:2:13: session settings: unknown key `transitons`");
  });

  it("runs each trace under the intent: a call outside it is refused by the session", async () => {
    writeFileSync(join(dir, "intent.json"), '{"goal":"read my calendar","allowed_actions":["calendar.read_*"]}');
    const out = await runCli(["replay", "--policy", policy, "--intent", "intent.json", join(fixtures, "basic.jsonl")], {
      cwd: dir,
    });
    expect(out.code).toBe(0);
    const calls = lines(out.stdout);
    expect(calls.map((c) => c["route"])).toEqual(["accept", "refuse", "refuse"]);
    expect(JSON.stringify(calls[2]?.["reasons"])).toContain("intent_not_allowed");
  });

  it("has a --help that teaches the format and the exit codes", async () => {
    const out = await runCli(["replay", "--help"]);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain('{"type":"tool_call","server":"…","tool":"…","args":{…}}');
    expect(out.stdout).toContain("4  a trace, policy, graph, intent or session settings file is invalid");
  });

  it("--help shows the two-line example as two lines a shell takes as one command", async () => {
    const out = await runCli(["replay", "--help"]);
    expect(out.stdout).toContain("--trusted-server calendar \\\n    trace.jsonl --json");
  });
});

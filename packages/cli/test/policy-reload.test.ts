import { execFileSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { MAX_POLICY_BYTES } from "@acp/core";
import {
  createReloadingPolicy,
  policyHash,
  readPolicyVersion,
  type PolicyVersion,
} from "../src/wiring/policy-reload.js";
import { tempRoot } from "./home-fixture.js";

const ALLOWS = 'version: "1"\ndefault_action: allow\n';
const DENIES = 'version: "1"\ndefault_action: deny\n';

const root = tempRoot("policy-reload");
afterAll(() => root.cleanup());
let n = 0;

/** A policy file holding `text`, watched with a clock the test moves; what it logged and recorded. */
function watched(text: string, record: (type: string) => unknown = () => undefined, settled = true) {
  const file = join(root.dir, `policy-${++n}.yml`);
  writeFileSync(file, text);
  const start = readPolicyVersion(file);
  if (!start.ok) throw new Error(start.problems.join("\n"));
  let clock = 0;
  const lines: string[] = [];
  const events: { type: string; fields: Record<string, unknown> }[] = [];
  const policy = createReloadingPolicy({
    file,
    initial: start.version,
    log: (line) => lines.push(line),
    record: (type, fields) => {
      events.push({ type, fields });
      return record(type);
    },
    intervalMs: 100,
    monotonic: () => clock,
    // every file looks settled but in the test of settling
    wallClock: () => Date.now() + (settled ? 60_000 : 0),
  });
  const later = (ms = 100): PolicyVersion => {
    clock += ms;
    return policy.current();
  };
  return { file, policy, lines, events, later };
}

describe("a running front end's policy file", () => {
  it("is not looked at again before the interval has passed", () => {
    const w = watched(ALLOWS);
    writeFileSync(w.file, DENIES);
    expect(w.policy.current().policy.default_action).toBe("allow");
    expect(w.later().policy.default_action).toBe("deny");
  });

  it("replaces the policy whole once the new text validates, and records the two versions", async () => {
    const w = watched(ALLOWS);
    writeFileSync(w.file, DENIES);
    const next = w.later();
    expect(next.hash).toBe(policyHash(DENIES));
    await w.policy.recorded();
    expect(w.events).toEqual([
      {
        type: "policy_reloaded",
        fields: { file: w.file, policy_hash: policyHash(DENIES), previous_policy_hash: policyHash(ALLOWS) },
      },
    ]);
    expect(w.policy.recorded()).toBeNull();
  });

  it("keeps the old policy over one that does not validate, naming every problem once for that version", async () => {
    const w = watched(ALLOWS);
    writeFileSync(w.file, 'version: "1"\ndefault_action: alow\nrulez: []\n');
    for (let i = 0; i < 3; i++) expect(w.later().hash).toBe(policyHash(ALLOWS));
    expect(w.lines.filter((l) => l.startsWith("error:"))).toHaveLength(1);
    expect(w.lines.some((l) => l.startsWith(`${w.file}:2:17: unknown action \`alow\``))).toBe(true);
    expect(w.lines.some((l) => l.startsWith(`${w.file}:3:1: unknown key \`rulez\``))).toBe(true);
    await w.policy.recorded();
    expect(w.events.map((e) => e.type)).toEqual(["policy_reload_refused"]);
    // a later good version is taken
    writeFileSync(w.file, DENIES);
    expect(w.later().hash).toBe(policyHash(DENIES));
  });

  it("keeps the old policy when the file is removed, a FIFO, or too large, never hanging", async () => {
    const w = watched(DENIES);
    rmSync(w.file);
    expect(w.later().hash).toBe(policyHash(DENIES));
    expect(w.lines.at(-1)).toBe(`${w.file}: cannot read the policy: no such file`);
    execFileSync("mkfifo", [w.file]);
    expect(w.later().hash).toBe(policyHash(DENIES));
    expect(w.lines.at(-1)).toBe(`${w.file}: cannot read the policy: not a file`);
    rmSync(w.file);
    writeFileSync(w.file, `${ALLOWS}#${"x".repeat(MAX_POLICY_BYTES)}\n`);
    expect(w.later().hash).toBe(policyHash(DENIES));
    expect(w.lines.at(-1)).toMatch(/:1:1: policy is \d+ bytes, larger than 10485760 bytes \(10 MiB\)$/);
    await w.policy.recorded();
    expect(w.events.map((e) => e.type)).toEqual(Array(3).fill("policy_reload_refused"));
  });

  it("a file written a moment ago is read at the next look, not half-way through its writing", () => {
    const w = watched(ALLOWS, undefined, false);
    writeFileSync(w.file, DENIES);
    expect(w.later().hash).toBe(policyHash(ALLOWS)); // written less than 100 ms ago: not yet
    expect(w.later().hash).toBe(policyHash(DENIES)); // the same version at the next look: taken
  });

  it("a file saved again with the same text is no reload", () => {
    const w = watched(ALLOWS);
    writeFileSync(w.file, ALLOWS);
    expect(w.later().hash).toBe(policyHash(ALLOWS));
    expect(w.events).toEqual([]);
  });

  it("a reload the audit could not record refuses the decisions that would use it, and is tried again", async () => {
    let failing = true;
    const w = watched(ALLOWS, () => (failing ? Promise.reject(new Error("disk full")) : undefined));
    writeFileSync(w.file, DENIES);
    expect(w.later().hash).toBe(policyHash(DENIES));
    const waiting = w.policy.recorded();
    await expect(waiting).rejects.toThrow("disk full");
    // the last recorded policy is back in force, and the file is read again at the next look
    expect(w.policy.current().hash).toBe(policyHash(ALLOWS));
    expect(w.lines.at(-1)).toMatch(/could not be recorded \(disk full\), so sha256:\w+ stays in force$/);
    failing = false;
    expect(w.later().hash).toBe(policyHash(ALLOWS)); // a failing audit is asked again after 20 intervals
    expect(w.later(1_900).hash).toBe(policyHash(DENIES));
    await w.policy.recorded();
    expect(w.policy.recorded()).toBeNull();
    expect(w.events.map((e) => e.type)).toEqual(["policy_reloaded", "policy_reloaded"]);
  });
});

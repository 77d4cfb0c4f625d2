import { generateKeyPairSync } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createHomeAuditSink } from "../src/wiring/audit-sink.js";

describe("the home audit sink's durability", () => {
  const homes: string[] = [];
  afterAll(() => {
    for (const home of homes) rmSync(home, { recursive: true, force: true });
  });
  const types = (home: string): string[] =>
    readFileSync(join(home, "audit.jsonl"), "utf8")
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => (JSON.parse(line) as { event_type: string }).event_type);

  it("an event a call waits on is on disk when record resolves, with the accept events before it", async () => {
    const home = mkdtempSync(join(tmpdir(), "acp-sink-"));
    homes.push(home);
    const sink = createHomeAuditSink({ home, clock: () => new Date(), signer: () => Promise.resolve(undefined) });
    const base = { call_id: "c1", session_id: "s1", server: "srv", tool: "echo" };
    await sink.record("tool_call_intercepted", { ...base, arguments: {} });
    await sink.record("policy_evaluated", { ...base, decision: "accept" });
    await sink.record("tool_call_forwarded", { ...base, arguments: {} });
    await sink.record("tool_call_completed", { ...base, is_error: false });
    await sink.record("policy_evaluated", { ...base, call_id: "c2", decision: "refuse" });
    expect(types(home)).toEqual([
      "tool_call_intercepted",
      "policy_evaluated",
      "tool_call_forwarded",
      "tool_call_completed",
      "policy_evaluated",
    ]);
    await sink.record("consent_approved", { ...base, call_id: "c3", decision: "approved" });
    expect(types(home).at(-1)).toBe("consent_approved");
    // a person's intent update and a changed tool definition are awaited too (not batched like accept events)
    await sink.record("intent_updated", { session_id: "s1", update_seq: 1 });
    expect(types(home).at(-1)).toBe("intent_updated");
    await sink.record("tool_definition_changed", { server: "srv", tool: "echo" });
    expect(types(home).at(-1)).toBe("tool_definition_changed");
    await sink.record("tool_call_intercepted", { ...base, call_id: "c4", arguments: {} });
    await sink.close();
    expect(types(home).at(-1)).toBe("tool_call_intercepted");
  });

  it("stages accept events after the caller's turn, in order; an event that cannot be made refuses its call at once", async () => {
    const home = mkdtempSync(join(tmpdir(), "acp-sink-"));
    homes.push(home);
    const sink = createHomeAuditSink({ home, clock: () => new Date(), signer: () => Promise.resolve(undefined) });
    const base = { call_id: "c1", session_id: "s1", server: "srv", tool: "echo" };
    await sink.record("tool_call_intercepted", { ...base, arguments: {} }); // opens the log
    await expect(sink.record("no_such_event", base)).rejects.toThrow("unknown audit event type `no_such_event`");
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic["self"] = cyclic;
    // made into an event on the call's path: metadata that is not JSON refuses this call, not a later one
    await expect(sink.record("tool_call_forwarded", { ...base, arguments: cyclic })).rejects.toThrow(/circular/i);
    await sink.record("policy_evaluated", { ...base, decision: "accept" });
    await sink.record("tool_call_completed", { ...base, is_error: false });
    // not yet in the writer's queue on the caller's turn; a durable event appends them first, in order
    await sink.record("consent_approved", { ...base, decision: "approved" });
    expect(types(home)).toEqual([
      "tool_call_intercepted",
      "policy_evaluated",
      "tool_call_completed",
      "consent_approved",
    ]);
    await sink.close();
  });

  it("tells the person, once, when it found the log with signed checkpoints and no anchor and anchored it again", async () => {
    const home = mkdtempSync(join(tmpdir(), "acp-sink-"));
    homes.push(home);
    const { privateKey } = generateKeyPairSync("ed25519");
    const signer = (): Promise<typeof privateKey> => Promise.resolve(privateKey);
    const base = { call_id: "c1", session_id: "s1", server: "srv", tool: "echo" };
    const said: string[] = [];
    const first = createHomeAuditSink({ home, clock: () => new Date(), signer, log: (line) => said.push(line) });
    await first.record("policy_evaluated", { ...base, decision: "refuse" });
    await first.close(); // line 2: the closing checkpoint, and its anchor
    expect(said).toEqual([]); // a log opened with its anchor (or new) says nothing
    const anchor = join(home, "audit.jsonl.checkpoint");
    unlinkSync(anchor);
    unlinkSync(join(home, "audit.jsonl.anchored")); // moved without both (its marker left: refused, anchor-marker.test.ts)

    const second = createHomeAuditSink({ home, clock: () => new Date(), signer, log: (line) => said.push(line) });
    await second.record("policy_evaluated", { ...base, call_id: "c2", decision: "refuse" });
    await second.record("policy_evaluated", { ...base, call_id: "c3", decision: "refuse" });
    expect(existsSync(anchor)).toBe(true);
    expect(said).toEqual([
      `the audit log ${join(home, "audit.jsonl")} had signed checkpoints but no anchor beside it: verified in full as ` +
        "`acp audit verify` does (every hash, link and checkpoint signature, with the home's public key) and " +
        `anchored again at its checkpoint on line 2 in ${anchor} (nothing after it); if you did not move or ` +
        "restore the log, find out why the anchor was missing",
    ]);
    await second.close();
  });
});

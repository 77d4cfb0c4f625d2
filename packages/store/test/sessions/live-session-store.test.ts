import { describe, expect, it } from "vitest";
import { createLiveSessionStore, openStateDb } from "../../src/index.js";

function store() {
  const db = openStateDb(":memory:");
  return createLiveSessionStore(db);
}

const session = { id: "s1", pid: 42, agent: "agent-x", startedAtMs: 1000, intentVersion: 1, intentHash: "sha256:aa" };

describe("live sessions in state.db", () => {
  it("registers a session once, lists it while live, and not after it closed (unless --all)", () => {
    const s = store();
    s.register(session);
    s.register({ ...session, agent: "other" });
    expect(s.get("s1")).toMatchObject({ agent: "agent-x", status: "live", updateSeq: 0 });
    expect(s.list().map((r) => r.id)).toEqual(["s1"]);
    s.close("s1", 2000);
    expect(s.list()).toEqual([]);
    expect(s.list({ all: true })[0]).toMatchObject({ status: "closed", endedAtMs: 2000 });
  });

  it("queues updates with increasing sequence numbers and bumps the counter the proxy reads", () => {
    const s = store();
    s.register(session);
    const seen: number[] = [];
    const sign = (seq: number) => {
      seen.push(seq);
      return { payloadJson: `{"seq":${seq}}`, signature: "ab" };
    };
    expect(s.queueUpdate("s1", 5, sign)).toMatchObject({ ok: true, seq: 1 });
    expect(s.queueUpdate("s1", 6, sign)).toMatchObject({ ok: true, seq: 2 });
    expect(seen).toEqual([1, 2]);
    expect(s.updateSeq("s1")).toBe(2);
    expect(s.pendingUpdates("s1", 1).map((u) => u.seq)).toEqual([2]);
    expect(s.settleUpdate("s1", 2, "applied", "version 2", 7)).toBe(true);
    expect(s.settleUpdate("s1", 2, "rejected", "again", 8)).toBe(false);
    expect(s.updates("s1").map((u) => u.status)).toEqual(["pending", "applied"]);
  });

  it("refuses an update for an unknown or closed session without writing anything", () => {
    const s = store();
    let signed = 0;
    const sign = () => {
      signed++;
      return { payloadJson: "{}", signature: "ab" };
    };
    expect(s.queueUpdate("nope", 1, sign)).toEqual({ ok: false, code: "session_unknown" });
    s.register(session);
    s.close("s1", 2);
    expect(s.queueUpdate("s1", 3, sign)).toMatchObject({ ok: false, code: "session_finished" });
    expect(signed).toBe(0);
    expect(s.updateSeq("s1")).toBe(0);
    expect(s.updates("s1")).toEqual([]);
  });

  it("a failing signer leaves no row and no counter change", () => {
    const s = store();
    s.register(session);
    expect(() =>
      s.queueUpdate("s1", 1, () => {
        throw new Error("cannot sign");
      }),
    ).toThrow("cannot sign");
    expect(s.updateSeq("s1")).toBe(0);
    expect(s.updates("s1")).toEqual([]);
  });
});

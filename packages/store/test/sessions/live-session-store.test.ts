import { spawnSync } from "node:child_process";
import { hostname } from "node:os";
import { describe, expect, it } from "vitest";
import { CLOSED_SESSION_KEEP_MS, createLiveSessionStore, openStateDb } from "../../src/index.js";

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

  it("forgets a session a day after it closed, with its intent updates, when another registers; keeps live and recent ones", () => {
    const db = openStateDb(":memory:");
    const s = createLiveSessionStore(db);
    const sign = () => ({ payloadJson: "{}", signature: "ab" });
    s.register({ ...session, id: "old" });
    expect(s.queueUpdate("old", 1500, sign)).toMatchObject({ ok: true, seq: 1 });
    s.close("old", 2000);
    s.register({ ...session, id: "recent" });
    s.close("recent", 3000);
    s.register({ ...session, id: "running" }); // never closed: stays whatever its age
    s.register({ ...session, id: "next", startedAtMs: 2000 + CLOSED_SESSION_KEEP_MS }); // exactly a day: kept
    expect(s.list({ all: true }).map((r) => r.id)).toContain("old");
    s.register({ ...session, id: "later", startedAtMs: 2001 + CLOSED_SESSION_KEEP_MS });
    expect(s.get("old")).toBeUndefined();
    expect(s.updates("old")).toEqual([]);
    expect(
      s
        .list({ all: true })
        .map((r) => r.id)
        .sort(),
    ).toEqual(["later", "next", "recent", "running"]);
    const rows = db.prepare<[], { n: number }>("SELECT count(*) AS n FROM session_intent_updates").get();
    expect(rows?.n).toBe(0);
  });

  it("finds the closed sessions to forget through an index", () => {
    const db = openStateDb(":memory:");
    createLiveSessionStore(db);
    const plan = db
      .prepare<[], { detail: string }>(
        "EXPLAIN QUERY PLAN SELECT id FROM live_sessions WHERE status = 'closed' AND ended_at_ms < 0 ORDER BY ended_at_ms LIMIT 100",
      )
      .all()
      .map((r) => r.detail)
      .join(" | ");
    expect(plan).toMatch(/USING INDEX live_sessions_ended \(status=\? AND ended_at_ms<\?\)/);
  });

  it("closes the live sessions of a proxy that died without closing them, and forgets them a day later", () => {
    const db = openStateDb(":memory:");
    const gone = spawnSync(process.execPath, ["-e", ""]).pid ?? 0; // a process that has exited
    const killed = createLiveSessionStore(db, { owner: { pid: gone, host: hostname(), start: null } });
    killed.register({ ...session, id: "killed", pid: gone });
    const elsewhere = createLiveSessionStore(db, { owner: { pid: gone, host: "another-machine", start: null } });
    elsewhere.register({ ...session, id: "elsewhere", pid: gone, startedAtMs: 3000 }); // cannot be told from here
    expect(killed.get("killed")).toMatchObject({ status: "closed", endedAtMs: 3000 }); // closed as the next one started
    killed.register({ ...session, id: "unknown", pid: 42 }); // no owner recorded (another pid): stays live
    const s = createLiveSessionStore(db);
    s.register({ ...session, id: "mine", pid: process.pid, startedAtMs: 5000 }); // this process: running
    expect(
      s
        .list()
        .map((r) => r.id)
        .sort(),
    ).toEqual(["elsewhere", "mine", "unknown"]);
    s.register({ ...session, id: "later", pid: process.pid, startedAtMs: 3001 + CLOSED_SESSION_KEEP_MS });
    expect(s.get("killed")).toBeUndefined();
    expect(s.get("mine")).toMatchObject({ status: "live" });
  });
});

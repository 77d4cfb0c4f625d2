/**
 * One contract for `ServerStores`, run against both implementations: SQLite (`state.db` + `audit.jsonl`)
 * and PostgreSQL (a real server started by the test setup, one database per file).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { openServerStores, type AuditQuery, type ConsentChange, type ServerStores } from "@acp/server";
import { useTestDatabase } from "../../../store/test/postgres/test-database.js";
import { testKeys } from "../harness.js";

const db = useTestDatabase();
const dirs: string[] = [];
const opened: ServerStores[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const keys = testKeys();

async function open(kind: "sqlite" | "postgres"): Promise<ServerStores> {
  const dir = mkdtempSync(join(tmpdir(), "acp-server-stores-"));
  dirs.push(dir);
  const stores = await openServerStores({
    statePath: join(dir, "state.db"),
    auditPath: join(dir, "audit.jsonl"),
    clock: () => new Date(),
    keys,
    changePollMs: 30,
    answerPollMs: 10,
    ...(kind === "postgres" ? { storageUrl: db.url } : {}),
  });
  opened.push(stores);
  return stores;
}

function request(id: string, nowMs: number) {
  return {
    id,
    nonce: `n_${id}`,
    server: "mail",
    tool: "send_email",
    request: { id, action: { tool: "send_email" } },
    reasons: [],
    createdAtMs: nowMs,
    expiresAtMs: nowMs + 60_000,
  };
}

describe.each(["sqlite", "postgres"] as const)("server stores on %s", (kind) => {
  it("says which implementation and where", async () => {
    const stores = await open(kind);
    expect(stores.kind).toBe(kind);
    if (kind === "postgres") expect(stores.location).toMatch(/^postgres:\/\/.*\/acp_t_[0-9a-f]+$/);
    else expect(stores.location).toMatch(/state\.db$/);
    expect(await stores.ready()).toBe(true);
  });

  it("a sign-in link opens one session, once; sessions end on delete", async () => {
    const stores = await open(kind);
    const now = Date.now();
    const token = await stores.consoleAuth.createLink(now, 60_000);
    expect(await stores.consoleAuth.redeemLink(token, now)).toEqual({});
    expect(await stores.consoleAuth.redeemLink(token, now)).toBeNull();
    expect(await stores.consoleAuth.redeemLink("x".repeat(300), now)).toBeNull();
    const { id, session } = await stores.consoleAuth.createSession(now, 60_000);
    expect(await stores.consoleAuth.getSession(id, now)).toEqual(session);
    expect(session.approver).toBeUndefined();
    // a link names who it signs in, and the session keeps the name (the approver of its answers)
    const named = await stores.consoleAuth.createLink(now, 60_000, "alice");
    expect(await stores.consoleAuth.redeemLink(named, now)).toEqual({ approver: "alice" });
    const alice = await stores.consoleAuth.createSession(now, 60_000, "alice");
    expect(await stores.consoleAuth.getSession(alice.id, now)).toEqual({ ...alice.session, approver: "alice" });
    expect(await stores.consoleAuth.getSession(id, now + 61_000)).toBeNull();
    await stores.consoleAuth.deleteSession(id);
    expect(await stores.consoleAuth.getSession(id, now)).toBeNull();
  });

  it("pages and filters the audit chain newest first, and verifies it", async () => {
    const stores = await open(kind);
    for (const tool of ["read_a", "send_b", "read_c", "send_d", "read_e"]) {
      await stores.auditLog.append({
        event_type: "policy_evaluated",
        tool,
        decision: tool.startsWith("read") ? "accept" : "ask",
      });
    }
    await stores.auditLog.flush();
    const first = await stores.audit.list({ limit: 2 });
    expect(first.events.map((e) => e.event.tool)).toEqual(["read_e", "send_d"]);
    expect(first.total).toBe(5);
    expect(first.next).not.toBeNull();
    const second = await stores.audit.list({ limit: 2, before: first.next ?? 0 });
    expect(second.events.map((e) => e.event.tool)).toEqual(["read_c", "send_b"]);
    const asks = await stores.audit.list({ limit: 10, decision: "ask" });
    expect(asks.events.map((e) => e.event.tool)).toEqual(["send_d", "send_b"]);
    expect(asks.next).toBeNull();
    const text = await stores.audit.list({ limit: 10, q: "READ_C" });
    expect(text.events.map((e) => e.event.tool)).toEqual(["read_c"]);
    expect(await stores.audit.verify()).toMatchObject({ ok: true });
  });

  it("an event holding a NUL (an agent's tool name) leaves every filter working; a filter holding one answers", async () => {
    const stores = await open(kind);
    await stores.auditLog.append({ event_type: "policy_evaluated", tool: "nul_write\u0000file", decision: "nul-ask" });
    await stores.auditLog.append({
      event_type: "policy_evaluated",
      tool: "nul_read",
      agent: "nul-bot",
      decision: "nul-ok",
    });
    await stores.auditLog.flush();
    const tools = async (query: Partial<AuditQuery>): Promise<unknown[]> =>
      (await stores.audit.list({ limit: 10, ...query })).events.map((e) => e.event.tool);
    expect(await tools({ tool: "nul_read" })).toEqual(["nul_read"]);
    expect(await tools({ agent: "nul-bot" })).toEqual(["nul_read"]);
    expect(await tools({ decision: "nul-ask" })).toEqual(["nul_write\u0000file"]);
    expect(await tools({ tool: "nul_write\u0000file" })).toEqual(["nul_write\u0000file"]);
    expect(await tools({ q: "NUL_WRITE" })).toEqual(["nul_write\u0000file"]);
    const total = (await stores.audit.list({ limit: 1 })).total;
    for (const query of [
      { eventType: "x\u0000" },
      { requestId: "cr_\u0000" },
      { agent: "\u0000" },
      { q: "e\u0000f" },
    ]) {
      expect(await stores.audit.list({ limit: 10, ...query })).toEqual({ events: [], total, next: null });
    }
    expect(await stores.audit.verify()).toMatchObject({ ok: true, problem: null });
  });

  it("a waiting answer resolves when the request is decided, and the feed reports raised and settled", async () => {
    const stores = await open(kind);
    const seen: ConsentChange[] = [];
    const unsubscribe = stores.changes.subscribe((c) => seen.push(c));
    await new Promise((r) => setTimeout(r, 100));
    const now = Date.now();
    await stores.pending.insert(request(`cr_${kind}_1`, now));
    stores.changes.poke();
    const waiting = stores.answers.wait(`cr_${kind}_1`, new AbortController().signal);
    const decided = await stores.pending.decide(`cr_${kind}_1`, "approved", { by: "test" }, Date.now());
    expect(decided.ok).toBe(true);
    expect((await waiting).status).toBe("approved");
    stores.changes.poke();
    for (let i = 0; i < 100 && !seen.some((c) => c.kind === "settled"); i++)
      await new Promise((r) => setTimeout(r, 30));
    unsubscribe();
    expect(seen).toContainEqual({ kind: "settled", id: `cr_${kind}_1`, status: "approved" });
  });

  it("an aborted wait rejects and a nonce is spent once", async () => {
    const stores = await open(kind);
    await stores.pending.insert(request(`cr_${kind}_2`, Date.now()));
    const control = new AbortController();
    const waiting = stores.answers.wait(`cr_${kind}_2`, control.signal);
    control.abort(new Error("gone"));
    await expect(waiting).rejects.toThrow("gone");
    const expires = Date.now() + 60_000;
    expect(await stores.nonces.spend(`n_${kind}_x`, "cr_x", expires)).toBe(true);
    expect(await stores.nonces.spend(`n_${kind}_x`, "cr_x", expires)).toBe(false);
  });
});

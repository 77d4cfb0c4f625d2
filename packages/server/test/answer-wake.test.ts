/**
 * `/v1/decide?wait=true` on SQLite: an answer recorded by this service (the API, the console) wakes the
 * waiting call at once. The poll interval is set to days here, so the call can only complete by that
 * wake-up — before, it read its row on a timer and these calls would wait for the next poll.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPolledAnswers, SESSION_TTL_MS, type EmbeddedServer } from "@acp/server";
import {
  createPendingConsentStore,
  openStateDb,
  toAsyncPendingConsentStore,
  type AsyncPendingConsentStore,
  type PendingConsentRow,
} from "@acp/store";
import { eventually, openTestServerAt, APPROVER_TOKEN } from "./harness.js";

const TOKEN = "answer-wake-token-0123456789";
const DAYS = 1_000_000_000; // ~11.5 days: a poll that never comes within the test
let home: string;
let node: EmbeddedServer;
let url: string;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), "acp-answer-wake-"));
  ({ node, url } = await openTestServerAt(home, {
    token: TOKEN,
    approverToken: APPROVER_TOKEN,
    answerPollMs: DAYS,
    changePollMs: 50,
  }));
});
afterAll(async () => {
  await node.close();
  rmSync(home, { recursive: true, force: true });
});

const auth = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
const approverAuth = { authorization: `Bearer ${APPROVER_TOKEN}`, "content-type": "application/json" };

async function waitingCall(path: string): Promise<{ id: string; answer: Promise<unknown> }> {
  const answer = fetch(`${url}/v1/decide?wait=true`, {
    method: "POST",
    headers: auth,
    body: JSON.stringify({ tool: "write_file", arguments: { path } }),
  }).then((res): Promise<unknown> => res.json());
  const row = await eventually(async () =>
    (await node.stores.pending.listPending(Date.now())).find(
      (r) =>
        JSON.stringify((r.request as { action: { parameters: unknown } }).action.parameters) ===
        JSON.stringify({ path }),
    ),
  );
  return { id: row.id, answer };
}

describe("a waiting call on SQLite wakes when this service records the answer", () => {
  it("through the API", async () => {
    const { id, answer } = await waitingCall("/tmp/api");
    const res = await fetch(`${url}/v1/consent/${id}/response`, {
      method: "POST",
      headers: approverAuth,
      body: JSON.stringify({ decision: "denied", reason: "not now" }),
    });
    expect(res.status).toBe(200);
    expect(await answer).toMatchObject({ route: "refuse", consent: { outcome: "denied", request_id: id } });
  });

  it("through the console", async () => {
    const { id, session } = await node.stores.consoleAuth.createSession(Date.now(), SESSION_TTL_MS);
    const call = await waitingCall("/tmp/console");
    const res = await fetch(`${url}/console/api/consent/${call.id}`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie: `acp_console=${id}`, "x-csrf-token": session.csrfToken },
      body: JSON.stringify({ decision: "approved" }),
    });
    expect(res.status).toBe(200);
    expect(await call.answer).toMatchObject({ route: "accept", consent: { outcome: "approved", request_id: call.id } });
  });
});

describe("createPolledAnswers", () => {
  /** A pending table of one row whose reads are counted; `status` is what the next read returns. */
  function oneRow() {
    const state = { status: "pending", reads: 0, gets: 0 };
    const row = (): PendingConsentRow => ({ id: "cr_1", status: state.status }) as unknown as PendingConsentRow;
    const store = {
      peek: (id: string) => {
        state.reads++;
        return Promise.resolve(id === "cr_1" ? { nonce: "n", status: state.status, answered: true } : null);
      },
      get: (id: string) => {
        state.gets++;
        return Promise.resolve(id === "cr_1" ? row() : null);
      },
    } as unknown as AsyncPendingConsentStore;
    return { state, store };
  }

  it("reads the row once more when woken, not on a timer", async () => {
    const { state, store } = oneRow();
    const answers = createPolledAnswers(store, DAYS);
    const waiting = answers.wait("cr_1", new AbortController().signal);
    while (state.reads === 0) await new Promise((resolve) => setImmediate(resolve));
    state.status = "approved";
    answers.wake("cr_2"); // another row's wake-up does not concern it
    answers.wake("cr_1");
    expect((await waiting).status).toBe("approved");
    expect(state.reads).toBe(2);
    expect(state.gets).toBe(1);
  });

  it("polls the status alone: a waiter through many polls reads the whole row (its arguments) once", async () => {
    const db = openStateDb(":memory:");
    try {
      const table = createPendingConsentStore(db);
      const now = Date.now();
      const big = "x".repeat(1 << 20); // a megabyte of arguments: what each poll used to read
      table.insert({
        id: "cr_big",
        nonce: "n_big",
        server: "fs",
        tool: "write_file",
        request: { id: "cr_big", action: { parameters: { content: big } } },
        reasons: [],
        createdAtMs: now,
        expiresAtMs: now + 3_600_000,
      });
      const real = toAsyncPendingConsentStore(table);
      const counts = { peeks: 0, gets: 0 };
      const counted: AsyncPendingConsentStore = {
        ...real,
        peek: (id) => (counts.peeks++, real.peek(id)),
        get: (id) => (counts.gets++, real.get(id)),
      };
      const waiting = createPolledAnswers(counted, 1).wait("cr_big", new AbortController().signal);
      while (counts.peeks + counts.gets < 5) await new Promise((resolve) => setTimeout(resolve, 1));
      // answered as `acp approve` would: another process, no wake-up; the next poll finds it
      expect(table.decide("cr_big", "approved", { by: "cli" }, Date.now()).ok).toBe(true);
      const row = await waiting;
      expect(row).toMatchObject({ id: "cr_big", status: "approved", answer: { by: "cli" } });
      expect((row.request as { action: { parameters: { content: string } } }).action.parameters.content).toBe(big);
      expect(counts.gets).toBe(1);
      expect(counts.peeks).toBeGreaterThanOrEqual(6);
    } finally {
      db.close();
    }
  });

  it("still finds an answer another process wrote (no wake-up) at its next poll", async () => {
    const { state, store } = oneRow();
    const answers = createPolledAnswers(store, 5);
    const waiting = answers.wait("cr_1", new AbortController().signal);
    while (state.reads === 0) await new Promise((resolve) => setImmediate(resolve));
    state.status = "denied";
    expect((await waiting).status).toBe("denied");
  });

  it("stops when its signal aborts, and rejects for a row that is not there", async () => {
    const { store } = oneRow();
    const answers = createPolledAnswers(store, DAYS);
    const abort = new AbortController();
    const waiting = answers.wait("cr_1", abort.signal);
    abort.abort(new Error("gone"));
    await expect(waiting).rejects.toThrow("gone");
    await expect(answers.wait("cr_missing", new AbortController().signal)).rejects.toThrow(/not in the pending table/);
  });
});

/**
 * The shared suite every {@link AsyncPendingConsentStore} passes: SQLite (adapted) and PostgreSQL.
 * `factory` makes a store with no rows (called once per test).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  SETTLED_CONSENT_KEEP_MS,
  type AsyncPendingConsentStore,
  type NewPendingConsent,
  type PendingLimit,
  type PendingPageQuery,
} from "../../src/index.js";

/** Makes an empty store. */
export type PendingStoreFactory = () => Promise<AsyncPendingConsentStore>;

const T0 = Date.parse("2026-01-15T12:00:00Z");

/** A request as the CLI channel would write it. */
export function pendingRow(id: string, overrides: Partial<NewPendingConsent> = {}): NewPendingConsent {
  return {
    id,
    nonce: `n_${id}`,
    sessionId: "s1",
    server: "fs",
    tool: "write_file",
    request: { id, action: { parameters: { path: "/tmp/x" } } },
    reasons: [{ code: "rule_matched" }],
    createdAtMs: T0,
    expiresAtMs: T0 + 60_000,
    ...overrides,
  };
}

/** A request naming `agent` (its `consent_request`'s `agent.id`), as the service writes it. */
function agentRow(id: string, agent: string, overrides: Partial<NewPendingConsent> = {}): NewPendingConsent {
  return pendingRow(id, { request: { id, agent: { id: agent }, action: { parameters: {} } }, ...overrides });
}

export function describePendingConsentStore(name: string, factory: PendingStoreFactory): void {
  describe(`pending consent store contract: ${name}`, () => {
    it("lists only pending, unexpired requests, oldest first, and reads rows back as written", async () => {
      const store = await factory();
      await store.insert(pendingRow("cr_b", { createdAtMs: T0 + 1 }));
      await store.insert(pendingRow("cr_a"));
      await store.insert(pendingRow("cr_old", { expiresAtMs: T0 + 10 }));
      await store.insert(
        pendingRow("cr_nosession", { sessionId: undefined as unknown as string, createdAtMs: T0 + 2 }),
      );
      expect((await store.listPending(T0 + 100)).map((r) => r.id)).toEqual(["cr_a", "cr_b", "cr_nosession"]);
      // the owner (the waiting process) is the SQLite store's alone: checked in pending-consent.test.ts
      const { owner: _owner, ...got } = (await store.get("cr_a")) ?? { owner: null };
      void _owner;
      expect(got).toEqual({
        id: "cr_a",
        nonce: "n_cr_a",
        sessionId: "s1",
        server: "fs",
        tool: "write_file",
        request: { id: "cr_a", action: { parameters: { path: "/tmp/x" } } },
        reasons: [{ code: "rule_matched" }],
        createdAtMs: T0,
        expiresAtMs: T0 + 60_000,
        status: "pending",
        answer: null,
        decidedAtMs: null,
      });
      expect((await store.get("cr_nosession"))?.sessionId).toBeNull();
      expect(await store.get("cr_missing")).toBeNull();
    });

    it("refuses a second insert of one id and keeps the first", async () => {
      const store = await factory();
      await store.insert(pendingRow("cr_a"));
      await expect(store.insert(pendingRow("cr_a", { tool: "other" }))).rejects.toThrow();
      expect((await store.get("cr_a"))?.tool).toBe("write_file");
    });

    it("records an answer once; a second answer, an unknown id or an expired request is refused", async () => {
      const store = await factory();
      await store.insert(pendingRow("cr_a"));
      await store.insert(pendingRow("cr_e", { expiresAtMs: T0 + 10 }));
      expect(await store.decide("cr_a", "approved", { by: "me" }, T0 + 1)).toMatchObject({
        ok: true,
        row: { status: "approved", answer: { by: "me" }, decidedAtMs: T0 + 1 },
      });
      expect(await store.decide("cr_a", "denied", {}, T0 + 2)).toEqual({
        ok: false,
        code: "consent_request_already_decided",
        status: "approved",
      });
      expect(await store.decide("cr_x", "approved", {}, T0)).toEqual({ ok: false, code: "consent_request_unknown" });
      expect(await store.decide("cr_e", "approved", {}, T0 + 10)).toEqual({
        ok: false,
        code: "consent_request_expired",
        status: "pending",
      });
      expect(await store.get("cr_e")).toMatchObject({ status: "pending", answer: null, decidedAtMs: null });
      expect((await store.get("cr_a"))?.answer).toEqual({ by: "me" });
    });

    it("peeks at a row's nonce, status and answer without its JSON: pending, answered, settled, unknown", async () => {
      const store = await factory();
      await store.insert(pendingRow("cr_a"));
      await store.insert(pendingRow("cr_s"));
      expect(await store.peek("cr_a")).toEqual({
        nonce: "n_cr_a",
        status: "pending",
        answered: false,
        decidedAtMs: null,
      });
      await store.decide("cr_a", "denied", { by: "me" }, T0 + 1);
      expect(await store.peek("cr_a")).toEqual({
        nonce: "n_cr_a",
        status: "denied",
        answered: true,
        decidedAtMs: T0 + 1,
      });
      // settled by another channel: ended, but no answer in the row
      await store.settle("cr_s", "approved", T0 + 2);
      expect(await store.peek("cr_s")).toEqual({
        nonce: "n_cr_s",
        status: "approved",
        answered: false,
        decidedAtMs: T0 + 2,
      });
      expect(await store.peek("cr_missing")).toBeNull();
      expect(await store.peek("cr_\u0000nul")).toBeNull();
    });

    it("lets exactly one of many concurrent answers win", async () => {
      const store = await factory();
      await store.insert(pendingRow("cr_race"));
      const answers = Array.from({ length: 12 }, (_, i) =>
        store.decide("cr_race", i % 2 === 0 ? "approved" : "denied", { i }, T0 + 1),
      );
      const results = await Promise.all(answers);
      const winners = results.filter((r) => r.ok);
      expect(winners).toHaveLength(1);
      const row = await store.get("cr_race");
      expect(row?.answer).toEqual(winners[0]?.ok === true ? winners[0].row.answer : "no winner");
      for (const r of results) if (!r.ok) expect(r.code).toBe("consent_request_already_decided");
    });

    it("settles only a pending row and purges settled rows created before a time", async () => {
      const store = await factory();
      await store.insert(pendingRow("cr_a"));
      await store.insert(pendingRow("cr_keep", { createdAtMs: T0 + 5 }));
      await store.insert(pendingRow("cr_open"));
      expect(await store.settle("cr_a", "withdrawn", T0 + 1)).toBe(true);
      expect(await store.settle("cr_a", "approved", T0 + 2)).toBe(false);
      expect(await store.settle("cr_missing", "expired", T0 + 2)).toBe(false);
      expect(await store.settle("cr_keep", "expired", T0 + 6)).toBe(true);
      expect((await store.get("cr_a"))?.status).toBe("withdrawn");
      expect(await store.deleteSettledBefore(T0 + 1)).toBe(1);
      expect(await store.get("cr_a")).toBeNull();
      expect((await store.get("cr_keep"))?.status).toBe("expired");
      expect((await store.get("cr_open"))?.status).toBe("pending");
    });

    it("drops requests settled and expired over a day before as new ones come, so the table stays bounded", async () => {
      const store = await factory();
      const day = SETTLED_CONSENT_KEEP_MS;
      // an agent that raises requests and withdraws them at once: every one used to stay in the table
      for (let i = 0; i < 3; i++) {
        const id = `cr_old${i}`;
        await store.insert(pendingRow(id, { createdAtMs: T0 - 2 * day, expiresAtMs: T0 - 2 * day + 60_000 }));
        expect(await store.settle(id, i === 0 ? "approved" : "withdrawn", T0 - 2 * day + 1)).toBe(true);
      }
      await store.insert(pendingRow("cr_recent", { createdAtMs: T0 - day + 120_000, expiresAtMs: T0 - day + 180_000 }));
      await store.settle("cr_recent", "denied", T0 - day + 120_001);
      await store.insert(pendingRow("cr_stuck", { createdAtMs: T0 - 2 * day, expiresAtMs: T0 - 2 * day + 60_000 }));
      expect(await store.insert(pendingRow("cr_new"))).toBeUndefined();
      for (let i = 0; i < 3; i++) expect(await store.get(`cr_old${i}`)).toBeNull();
      expect((await store.get("cr_recent"))?.status).toBe("denied"); // ended less than a day before: kept
      expect((await store.get("cr_stuck"))?.status).toBe("pending"); // still pending: left to be concluded
      expect((await store.get("cr_new"))?.status).toBe("pending");
      // the limited insert drops them too
      await store.insert(pendingRow("cr_old9", { createdAtMs: T0 - 2 * day, expiresAtMs: T0 - 2 * day + 60_000 }));
      await store.settle("cr_old9", "expired", T0 - 2 * day + 60_000);
      expect(await store.insertWithinLimit(pendingRow("cr_new2"), { max: 10 })).toEqual({ ok: true });
      expect(await store.get("cr_old9")).toBeNull();
    });

    it("rejects an answer that is neither approved nor denied and changes nothing", async () => {
      const store = await factory();
      await store.insert(pendingRow("cr_a"));
      const hostile = "pending" as unknown as "approved";
      await expect(store.decide("cr_a", hostile, {}, T0 + 1)).rejects.toThrow();
      expect(await store.get("cr_a")).toMatchObject({ status: "pending", answer: null });
    });

    it("stores hostile text (quotes, SQL, unicode, a large request) verbatim", async () => {
      const store = await factory();
      const id = "cr_'; DROP TABLE pending_consent; --";
      const request = { text: "\u2028é😀\"'\\", big: "x".repeat(256 * 1024), nested: [[[{ a: null }]]] };
      await store.insert(pendingRow(id, { tool: 't"ool`', server: "ſerver", request }));
      const row = await store.get(id);
      expect(row).toMatchObject({ id, tool: 't"ool`', server: "ſerver" });
      expect(row?.request).toEqual(request);
      expect((await store.listPending(T0)).map((r) => r.id)).toEqual([id]);
    });

    it("inserts within the limit and refuses beyond it, in all and per agent, writing nothing then", async () => {
      const store = await factory();
      const limit = (agent: string): PendingLimit => ({ max: 3, perAgent: { agent, max: 2 } });
      expect(await store.insertWithinLimit(agentRow("cr_a1", "a"), limit("a"))).toEqual({ ok: true });
      expect(await store.insertWithinLimit(agentRow("cr_a2", "a"), limit("a"))).toEqual({ ok: true });
      expect(await store.insertWithinLimit(agentRow("cr_a3", "a"), limit("a"))).toEqual({
        ok: false,
        full: "agent",
        max: 2,
      });
      // another agent, and a request naming none (counted in the total only), still get in
      expect(await store.insertWithinLimit(agentRow("cr_b1", "b"), limit("b"))).toEqual({ ok: true });
      expect(await store.insertWithinLimit(pendingRow("cr_n1"), { max: 3 })).toEqual({
        ok: false,
        full: "total",
        max: 3,
      });
      expect(await store.get("cr_a3")).toBeNull();
      expect(await store.get("cr_n1")).toBeNull();
      expect((await store.listPending(T0)).map((r) => r.id).sort()).toEqual(["cr_a1", "cr_a2", "cr_b1"]);
      await expect(store.insertWithinLimit(agentRow("cr_a1", "a"), { max: 10 })).rejects.toThrow();
      await expect(store.insertWithinLimit(pendingRow("cr_bad"), { max: 1.5 })).rejects.toThrow(RangeError);
    });

    it("holds each caller to its share: a named caller's sessions `NAME/…`, the unnamed ones' without `/`", async () => {
      const store = await factory();
      const named = (caller: string): PendingLimit => ({ max: 10, perCaller: { caller, max: 2 } });
      const unnamed: PendingLimit = { max: 10, perCaller: { caller: null, max: 2 } };
      const row = (id: string, sessionId: string, agent: string): NewPendingConsent =>
        agentRow(id, agent, { sessionId });
      expect(await store.insertWithinLimit(row("cr_c1", "ci/s1", "ci"), named("ci"))).toEqual({ ok: true });
      expect(await store.insertWithinLimit(row("cr_c2", "ci/s2", "ci"), named("ci"))).toEqual({ ok: true });
      expect(await store.insertWithinLimit(row("cr_c3", "ci/s3", "ci"), named("ci"))).toEqual({
        ok: false,
        full: "caller",
        max: 2,
      });
      // a caller whose name starts another's has a share of its own
      expect(await store.insertWithinLimit(row("cr_cx", "ci2/s1", "ci2"), named("ci2"))).toEqual({ ok: true });
      // the unnamed callers share one share, whatever agent each request names
      expect(await store.insertWithinLimit(row("cr_u1", "http-1", "x1"), unnamed)).toEqual({ ok: true });
      expect(await store.insertWithinLimit(row("cr_u2", "s", "x2"), unnamed)).toEqual({ ok: true });
      expect(await store.insertWithinLimit(row("cr_u3", "t", "x3"), unnamed)).toEqual({
        ok: false,
        full: "caller",
        max: 2,
      });
      expect(await store.get("cr_c3")).toBeNull();
      expect(await store.get("cr_u3")).toBeNull();
      // the total is checked first
      expect(
        await store.insertWithinLimit(row("cr_t", "ci/s4", "ci"), { max: 5, perCaller: { caller: "ci", max: 2 } }),
      ).toEqual({
        ok: false,
        full: "total",
        max: 5,
      });
      await expect(
        store.insertWithinLimit(row("cr_bad", "s", "x"), { max: 10, perCaller: { caller: "", max: 1 } }),
      ).rejects.toThrow(TypeError);
    });

    it("counts only requests still pending and unexpired when the new one is made", async () => {
      const store = await factory();
      const limit: PendingLimit = { max: 2, perAgent: { agent: "a", max: 1 } };
      await store.insert(agentRow("cr_answered", "a"));
      await store.decide("cr_answered", "denied", {}, T0 + 1);
      await store.insert(agentRow("cr_expired", "a", { expiresAtMs: T0 + 10 }));
      await store.insert(agentRow("cr_withdrawn", "a"));
      await store.settle("cr_withdrawn", "withdrawn", T0 + 1);
      const later = { createdAtMs: T0 + 10, expiresAtMs: T0 + 60_000 };
      expect(await store.insertWithinLimit(agentRow("cr_a", "a", later), limit)).toEqual({ ok: true });
      expect(await store.insertWithinLimit(agentRow("cr_a2", "a", later), limit)).toMatchObject({ full: "agent" });
      expect(await store.insertWithinLimit(pendingRow("cr_n", later), { max: 2 })).toEqual({ ok: true });
      expect(await store.insertWithinLimit(pendingRow("cr_n2", later), { max: 2 })).toMatchObject({ full: "total" });
    });

    it("lets no more than the limit in, of many concurrent inserts, in all and per agent", async () => {
      const store = await factory();
      const agents = ["a", "b", "c"];
      const attempts = Array.from({ length: 24 }, (_, i) => {
        const agent = agents[i % agents.length] ?? "a";
        return store.insertWithinLimit(agentRow(`cr_${i}`, agent), { max: 7, perAgent: { agent, max: 3 } });
      });
      const results = await Promise.all(attempts);
      expect(results.filter((r) => r.ok)).toHaveLength(7);
      const rows = await store.listPending(T0);
      expect(rows).toHaveLength(7);
      for (const agent of agents) {
        expect(
          rows.filter((r) => (r.request as { agent: { id: string } }).agent.id === agent).length,
        ).toBeLessThanOrEqual(3);
      }
    });

    it("pages through the pending requests oldest first, each once, leaving settled and expired ones out", async () => {
      const store = await factory();
      for (let i = 0; i < 7; i++) await store.insert(pendingRow(`cr_${i}`, { createdAtMs: T0 + (i % 3) }));
      await store.insert(pendingRow("cr_gone", { expiresAtMs: T0 + 10 }));
      await store.insert(pendingRow("cr_answered", { createdAtMs: T0 + 1 }));
      expect((await store.decide("cr_answered", "denied", { by: "x" }, T0 + 5)).ok).toBe(true);
      const seen: string[][] = [];
      let after: PendingPageQuery["after"];
      for (;;) {
        const page = await store.listPendingPage(T0 + 100, {
          limit: 3,
          maxBytes: 1 << 20,
          ...(after ? { after } : {}),
        });
        seen.push(page.rows.map((r) => r.id));
        if (!page.more) break;
        after = page.last ?? undefined;
      }
      expect(seen).toEqual([["cr_0", "cr_3", "cr_6"], ["cr_1", "cr_4", "cr_2"], ["cr_5"]]);
      expect(seen.flat()).toEqual((await store.listPending(T0 + 100)).map((r) => r.id));
      const empty = await store.listPendingPage(T0 + 100, {
        limit: 3,
        maxBytes: 0,
        after: { createdAtMs: T0 + 9, id: "" },
      });
      expect(empty).toEqual({ rows: [], last: null, more: false });
    });

    it("names the ids of the pending, unexpired requests oldest first, as listPending lists them", async () => {
      const store = await factory();
      await store.insert(pendingRow("cr_b", { createdAtMs: T0 + 1 }));
      await store.insert(pendingRow("cr_a"));
      await store.insert(pendingRow("cr_old", { expiresAtMs: T0 + 10 }));
      await store.insert(pendingRow("cr_done", { createdAtMs: T0 + 2 }));
      await store.settle("cr_done", "withdrawn", T0 + 5);
      const ids = await store.listPendingIds(T0 + 100);
      expect(ids.map((r) => r.id)).toEqual(["cr_a", "cr_b"]);
      expect(ids.map((r) => r.id)).toEqual((await store.listPending(T0 + 100)).map((r) => r.id));
    });

    it("reads a page only as far as its byte budget goes, the first row whatever its size", async () => {
      const store = await factory();
      const big = (id: string, size: number, at: number): NewPendingConsent =>
        pendingRow(id, { createdAtMs: T0 + at, request: { id, action: { parameters: { data: "x".repeat(size) } } } });
      await store.insert(big("cr_a", 50_000, 0));
      await store.insert(big("cr_b", 10, 1));
      await store.insert(big("cr_c", 10, 2));
      await store.insert(big("cr_d", 50_000, 3));
      const first = await store.listPendingPage(T0 + 100, { limit: 10, maxBytes: 1000 });
      expect(first.rows.map((r) => r.id)).toEqual(["cr_a", "cr_b", "cr_c"]);
      expect(first).toMatchObject({ last: { createdAtMs: T0 + 2, id: "cr_c" }, more: true });
      const second = await store.listPendingPage(T0 + 100, {
        limit: 10,
        maxBytes: 1000,
        ...(first.last !== null ? { after: first.last } : {}),
      });
      expect(second.rows.map((r) => r.id)).toEqual(["cr_d"]);
      expect(second.more).toBe(false);
      await expect(store.listPendingPage(T0, { limit: 0, maxBytes: 1 })).rejects.toThrow(RangeError);
    });

    it("pages whatever the sizes, limit and budget: every request once, in order, within both bounds", async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.integer({ min: 0, max: 400 }), { maxLength: 12 }),
          fc.integer({ min: 1, max: 5 }),
          fc.integer({ min: 0, max: 1500 }),
          async (sizes, limit, maxBytes) => {
            const store = await factory();
            for (const [i, size] of sizes.entries()) {
              const id = `cr_${String(i).padStart(2, "0")}`;
              await store.insert(pendingRow(id, { createdAtMs: T0 + (i % 4), request: { pad: "y".repeat(size) } }));
            }
            const listed: string[] = [];
            let after: PendingPageQuery["after"];
            for (let pages = 0; pages <= sizes.length; pages++) {
              const page = await store.listPendingPage(T0 + 100, { limit, maxBytes, ...(after ? { after } : {}) });
              expect(page.rows.length).toBeLessThanOrEqual(limit);
              const bytes = page.rows
                .slice(1)
                .map((r) => JSON.stringify(r.request).length + JSON.stringify(r.reasons).length);
              expect(bytes.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(maxBytes);
              listed.push(...page.rows.map((r) => r.id));
              if (!page.more) break;
              after = page.last ?? undefined;
            }
            expect(listed).toEqual((await store.listPending(T0 + 100)).map((r) => r.id));
          },
        ),
        { numRuns: 25 },
      );
    });

    it("keeps the first answer whatever sequence of answers and settlements follows", async () => {
      const op = fc.record({
        kind: fc.constantFrom("approved", "denied", "expired", "withdrawn"),
        at: fc.integer({ min: 1, max: 120_000 }),
      });
      await fc.assert(
        fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 6 }), async (ops) => {
          const store = await factory();
          await store.insert(pendingRow("cr_p"));
          let first: string | null = null;
          for (const { kind, at } of ops) {
            const changed =
              kind === "approved" || kind === "denied"
                ? (await store.decide("cr_p", kind, { kind }, T0 + at)).ok
                : await store.settle("cr_p", kind, T0 + at);
            if (changed) {
              expect(first).toBeNull();
              first = kind;
            }
          }
          expect((await store.get("cr_p"))?.status).toBe(first ?? "pending");
        }),
        { numRuns: 25 },
      );
    });
  });
}

/**
 * The claim store's contract (§5 state machine, §15 handle rotation, §17 single-use exchange, §19 atomic claim),
 * run against every implementation: SQLite in `claim-store-sqlite.test.ts`, PostgreSQL in
 * `postgres/claim-store-postgres.test.ts`. The racing cases fire concurrent calls; on PostgreSQL they run on
 * separate pooled connections, so the conditional updates really race.
 */
import { randomBytes } from "node:crypto";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ClaimStore, CreateSandboxInput, FaqBody, SecretBox } from "../src/index.js";
import { createSecretBox, ENDED_RETENTION_MS } from "../src/index.js";

/** An opened store and how to dispose of it. */
export interface OpenedStore {
  readonly store: ClaimStore;
  /** How many rows `table` holds, or what a `SELECT count(*) AS n …` counts (to see what the sweep purges). */
  rows(tableOrCount: string): Promise<number>;
  close(): Promise<void>;
}

const T0 = Date.parse("2026-03-01T12:00:00Z");
const HOUR = 3_600_000;

const faq = (slug: string): FaqBody =>
  ({
    title: `FAQ ${slug}`,
    slug,
    description: "",
    questions: [],
    settings: { theme: "auto", accent_color: "#336699", show_search: true, show_feedback: false },
  }) as unknown as FaqBody;

/** Registers the contract tests for one implementation. */
export function claimStoreContract(label: string, open: (box: SecretBox) => Promise<OpenedStore>): void {
  describe(`claim store contract (${label})`, () => {
    let opened: OpenedStore;
    let s: ClaimStore;
    const box = createSecretBox(randomBytes(32));
    const h = (v: string): string => box.hash("t", v);

    beforeEach(async () => {
      opened = await open(box);
      s = opened.store;
    });
    afterEach(async () => opened.close());

    const create = async (challenge = randomBytes(8).toString("hex"), token = randomBytes(8).toString("hex")) => {
      const made = await s.createSandbox({
        challenge,
        tokenHash: h(token),
        ttlMs: 48 * HOUR,
        tokenTtlMs: 48 * HOUR,
        metadata: "{}",
        now: T0,
      });
      if (made === undefined) throw new Error("sandbox not created");
      return { ...made, token };
    };
    const published = async () => {
      const a = await create();
      const f = await s.createFaq(a.id, faq("help"), 5, T0);
      if (typeof f === "string") throw new Error(f);
      const p = await s.publishFaq(a.id, f.id, T0 + 1, f.body);
      if (p === undefined || p === "changed") throw new Error("not published");
      return { ...a, faqId: f.id, handle: p.handle, previewHandle: a.handle };
    };
    const code = async (id: string, kind: "claim_code" | "exchange_code" = "claim_code", surface = "") => {
      const c = randomBytes(8).toString("hex");
      const ok = await s.issueCode(id, kind, surface, h(c), HOUR, ["published", "active"], T0 + 2);
      return ok ? c : undefined;
    };
    const claim = (c: string, challenge = randomBytes(8).toString("hex"), now = T0 + 3) =>
      s.claim({
        codeHash: h(c),
        challenge,
        ownerSessionHash: h(randomBytes(8).toString("hex")),
        ownerTtlMs: HOUR,
        now,
      });

    it("§7.2/§11: create spends its challenge once and leaves the sandbox active with a live agent token", async () => {
      const a = await create("challenge-1");
      expect((await s.sandbox(a.id))?.state).toBe("active");
      expect(await s.liveHandle(a.id)).toBe(a.handle);
      expect((await s.credentialSandbox(h(a.token), "agent_token", "", ["active"], T0))?.id).toBe(a.id);
      expect(await create("challenge-1").catch((e: Error) => e.message)).toBe("sandbox not created");
      expect(await s.credentialSandbox(h("nope"), "agent_token", "", ["active"], T0)).toBeUndefined();
    });

    it("§15/§30: publish rotates the handle once; the preview handle never resolves again", async () => {
      const a = await published();
      expect(a.handle).not.toBe(a.previewHandle);
      expect((await s.sandbox(a.id))?.state).toBe("published");
      expect((await s.sandboxByHandle(a.handle, T0 + 2))?.id).toBe(a.id);
      expect(await s.sandboxByHandle(a.previewHandle, T0 + 2)).toBeUndefined();
      const again = await s.publishFaq(a.id, a.faqId, T0 + 2, faq("help"));
      expect(again).toEqual({ handle: a.handle, previous: undefined, rotated: false });
    });

    it("§19.2/§19.4: the claim is atomic — code single use, handle rotated, every other credential revoked", async () => {
      const a = await published();
      const c = (await code(a.id)) ?? "";
      const exch = (await code(a.id, "exchange_code", "preview")) ?? "";
      const done = await claim(c);
      expect(done?.id).toBe(a.id);
      expect(done?.handle).not.toBe(a.handle);
      expect((await s.sandbox(a.id))?.state).toBe("claimed");
      expect(await s.sandboxByHandle(a.handle, T0 + 4)).toBeUndefined();
      expect((await s.sandboxByHandle(done?.handle ?? "", T0 + 4))?.state).toBe("claimed");
      expect(await s.credentialSandbox(h(a.token), "agent_token", "", ["active", "published", "claimed"], T0 + 4)).toBe(
        undefined,
      );
      expect(await s.consumeExchange(h(exch), "preview", h("sess"), HOUR, T0 + 4)).toBeUndefined();
      expect(await claim(c)).toBeUndefined();
    });

    it("§19.2: a claim that fails on state rolls back whole — the code and challenge stay unspent", async () => {
      const a = await create();
      const c = (await code(a.id)) ?? "";
      expect(await claim(c, "ch-x")).toBeUndefined(); // still active, not published
      const f = await s.createFaq(a.id, faq("x"), 5, T0);
      if (typeof f === "string") throw new Error(f);
      await s.publishFaq(a.id, f.id, T0 + 1, f.body);
      expect((await claim(c, "ch-x"))?.id).toBe(a.id);
    });

    it("§5: expired, deleted and claimed sandboxes make no further transition", async () => {
      const a = await published();
      const b = await create();
      expect(await s.sweep(T0 + 48 * HOUR)).toBe(2);
      expect((await s.sandbox(a.id))?.state).toBe("expired");
      expect(await s.listFaqs(a.id)).toEqual([]);
      expect(await s.deleteSandbox(b.id, T0 + 48 * HOUR)).toBe(false);
      expect(await s.extend(b.id, HOUR, 2, T0 + 48 * HOUR)).toBeUndefined();
      expect(await s.sandboxByHandle(a.handle, T0 + 48 * HOUR)).toBeUndefined();
      const d = await create();
      expect(await s.deleteSandbox(d.id, T0 + 1)).toBe(true);
      expect(await s.deleteSandbox(d.id, T0 + 1)).toBe(false);
      expect(await s.liveHandle(d.id)).toBeUndefined();
    });

    it("the sweep purges what can no longer count, a day after it ended; sandbox rows and retired handles stay", async () => {
      const a = await published();
      const kept = await create();
      await s.extend(kept.id, 96 * HOUR, 5, T0);
      await code(a.id);
      await code(a.id, "exchange_code", "preview");
      const credentials = await opened.rows("claim_credentials");
      const handles = await opened.rows("claim_handles");
      expect(await s.sweep(T0 + 48 * HOUR)).toBe(1);
      // the codes expired (T0 + 1 h) more than a day ago: gone; a's token, revoked as it ended, stays a day
      expect(await opened.rows("claim_credentials")).toBe(credentials - 2);
      expect(credentials).toBe(4);
      await s.sweep(T0 + 48 * HOUR + ENDED_RETENTION_MS);
      // a's token (revoked a day ago) and kept's (expired at T0 + 48 h, a day ago) are gone; kept lives on
      expect(await opened.rows("claim_credentials")).toBe(0);
      expect((await s.sandbox(kept.id))?.state).toBe("active");
      expect(await opened.rows("claim_handles")).toBe(handles);
      expect(await opened.rows("claim_sandboxes")).toBe(2);
      expect((await s.sandbox(a.id))?.state).toBe("expired");
      expect(await s.sandboxByHandle(a.handle, T0 + 50 * HOUR)).toBeUndefined();
    });

    it("the sweep drops an ended sandbox's metadata a day after it ended, a live one's never", async () => {
      const made = (metadata: string) =>
        s.createSandbox({
          challenge: randomBytes(8).toString("hex"),
          tokenHash: h(randomBytes(8).toString("hex")),
          ttlMs: 480 * HOUR,
          tokenTtlMs: HOUR,
          metadata,
          now: T0,
        });
      const gone = await made('{"name":"gone"}');
      const live = await made('{"name":"live"}');
      if (gone === undefined || live === undefined) throw new Error("not created");
      expect(await s.deleteSandbox(gone.id, T0 + HOUR)).toBe(true);
      const named = `SELECT count(*) AS n FROM claim_sandboxes WHERE metadata <> '{}'`;
      await s.sweep(T0 + HOUR + ENDED_RETENTION_MS - 1);
      expect(await opened.rows(named)).toBe(2);
      await s.sweep(T0 + HOUR + ENDED_RETENTION_MS);
      expect(await opened.rows(named)).toBe(1);
    });

    it("§20.1 a proof id is spent once, also by 8 racing calls, and forgotten by the sweep after it expires", async () => {
      const id = h("dpop-proof-1");
      const results = await Promise.all(Array.from({ length: 8 }, () => s.spendProof(id, T0 + 120_000)));
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(await s.spendProof(id, T0 + 120_000)).toBe(false);
      await s.sweep(T0 + 119_999);
      expect(await s.spendProof(id, T0 + 240_000)).toBe(false);
      await s.sweep(T0 + 240_000);
      expect(await s.spendProof(id, T0 + 360_000)).toBe(true);
    });

    it("§28: extensions stop at the maximum", async () => {
      const a = await create();
      expect(await s.extend(a.id, 24 * HOUR, 2, T0)).toEqual({ expiresAt: T0 + 72 * HOUR, extensions: 1 });
      expect(await s.extend(a.id, 24 * HOUR, 2, T0)).toEqual({ expiresAt: T0 + 96 * HOUR, extensions: 2 });
      expect(await s.extend(a.id, 24 * HOUR, 2, T0)).toBeUndefined();
    });

    it("FAQ CRUD: slugs unique per sandbox, order kept, updates and deletes report misses", async () => {
      const a = await create();
      const one = await s.createFaq(a.id, faq("one"), 5, T0);
      const two = await s.createFaq(a.id, faq("two"), 5, T0);
      expect(await s.createFaq(a.id, faq("one"), 5, T0)).toBe("slug_taken");
      if (typeof one === "string" || typeof two === "string") throw new Error("not created");
      expect((await s.listFaqs(a.id)).map((f) => f.body.slug)).toEqual(["one", "two"]);
      expect(await s.updateFaq(a.id, two.id, faq("one"), T0)).toBe(false);
      expect(await s.updateFaq(a.id, two.id, faq("three"), T0)).toBe(true);
      expect((await s.getFaq(a.id, two.id))?.body.slug).toBe("three");
      expect(await s.listFaqs(a.id, true)).toEqual([]);
      expect(await s.deleteFaq(a.id, one.id)).toBe(true);
      expect(await s.deleteFaq(a.id, one.id)).toBe(false);
      expect(await s.updateFaq(a.id, "faq_missing", faq("z"), T0)).toBe(false);
    });

    it("§23.2: publish goes through only with the body scanned; a draft-only write never lands on a published FAQ", async () => {
      const a = await create();
      const f = await s.createFaq(a.id, faq("scanned"), 5, T0);
      if (typeof f === "string") throw new Error(f);
      // An edit lands after the scan read the body: the publication refuses, and changes nothing.
      expect(await s.updateFaq(a.id, f.id, faq("edited"), T0 + 1, true)).toBe(true);
      expect(await s.publishFaq(a.id, f.id, T0 + 2, faq("scanned"))).toBe("changed");
      expect((await s.getFaq(a.id, f.id))?.status).toBe("draft");
      expect((await s.sandbox(a.id))?.state).toBe("active");
      expect(await s.liveHandle(a.id)).toBe(a.handle);
      expect(await s.publishFaq(a.id, "faq_missing", T0 + 2, faq("scanned"))).toBeUndefined();
      // The body stored is the one published.
      expect((await s.publishFaq(a.id, f.id, T0 + 3, faq("edited"))) ?? "missing").toMatchObject({ rotated: true });
      // Now published: an unscanned (draft-only) write is refused; a scanned one goes through.
      expect(await s.updateFaq(a.id, f.id, faq("late"), T0 + 4, true)).toBe(false);
      expect((await s.getFaq(a.id, f.id))?.body.slug).toBe("edited");
      expect(await s.updateFaq(a.id, f.id, faq("late"), T0 + 4)).toBe(true);
    });

    it("race: of 8 concurrent claims with one code exactly one wins", async () => {
      const a = await published();
      const c = (await code(a.id)) ?? "";
      const results = await Promise.all(Array.from({ length: 8 }, () => claim(c)));
      expect(results.filter((r) => r !== undefined)).toHaveLength(1);
      expect((await s.sandbox(a.id))?.state).toBe("claimed");
    });

    it("race: of 8 concurrent uses of one exchange code exactly one opens a session", async () => {
      const a = await published();
      const c = (await code(a.id, "exchange_code", "preview")) ?? "";
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) => s.consumeExchange(h(c), "preview", h(`session-${i}`), HOUR, T0 + 3)),
      );
      expect(results.filter((r) => r !== undefined)).toEqual([a.id]);
    });

    it("race: 8 concurrent creations under a limit of 5 FAQs leave exactly 5", async () => {
      const a = await create();
      const results = await Promise.all(Array.from({ length: 8 }, (_, i) => s.createFaq(a.id, faq(`f${i}`), 5, T0)));
      expect(results.filter((r) => typeof r !== "string")).toHaveLength(5);
      expect(await s.listFaqs(a.id)).toHaveLength(5);
    });

    it("race: one challenge spent by 8 concurrent creations admits exactly one sandbox", async () => {
      const results = await Promise.all(
        Array.from({ length: 8 }, () =>
          create("shared-challenge").then(
            () => true,
            () => false,
          ),
        ),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
    });

    const REP = { points: 10, halfLifeMs: 72 * HOUR };
    const made = async (over: Partial<CreateSandboxInput>) =>
      s.createSandbox({
        challenge: randomBytes(8).toString("hex"),
        tokenHash: h(randomBytes(8).toString("hex")),
        ttlMs: 48 * HOUR,
        tokenTtlMs: 48 * HOUR,
        metadata: "{}",
        now: T0,
        ...over,
      });

    it("§11.2 reputation: charges add up per key, decay by half-life, and unknown keys score 0", async () => {
      await s.chargeReputation({ keys: ["range:a", "range:b"], charge: REP, now: T0 });
      await s.chargeReputation({ keys: ["range:a", "range:a"], charge: REP, now: T0 + 72 * HOUR });
      const [a, b, c] = await s.reputation(["range:a", "range:b", "range:c"], REP.halfLifeMs, T0 + 72 * HOUR);
      expect(a).toBeCloseTo(15, 6); // 10 halved, plus 10 (the duplicate key charged once)
      expect(b).toBeCloseTo(5, 6);
      expect(c).toBe(0);
      expect((await s.reputation(["range:a"], REP.halfLifeMs, T0 + 216 * HOUR))[0]).toBeCloseTo(3.75, 6);
      expect(await s.resetReputation(["range:a", "range:c"])).toBe(1);
      expect(await s.reputation(["range:a", "range:b"], REP.halfLifeMs, T0)).toEqual([0, 10]);
    });

    it("§11.2 reputation: a sandbox's creating source and subject are charged through it, and abandoned sandboxes charge them once when swept", async () => {
      const a = await made({ sourceKey: "range:src", subjectKey: "subject:k:agent" });
      if (a === undefined) throw new Error("not created");
      await s.chargeReputation({ keys: ["range:caller"], sandboxId: a.id, charge: REP, now: T0 });
      const keys = ["range:src", "subject:k:agent", "range:caller"];
      expect(await s.reputation(keys, REP.halfLifeMs, T0)).toEqual([10, 10, 10]);
      const claimedLater = await made({ sourceKey: "range:other" });
      if (claimedLater === undefined) throw new Error("not created");
      expect(await s.deleteSandbox(claimedLater.id, T0 + 1)).toBe(true);
      const abandoned = { points: 1, halfLifeMs: REP.halfLifeMs };
      expect(await s.sweep(T0 + 48 * HOUR, abandoned)).toBe(1);
      expect(await s.sweep(T0 + 48 * HOUR, abandoned)).toBe(0);
      const after = await s.reputation([...keys, "range:other"], REP.halfLifeMs, T0 + 48 * HOUR);
      const decayed = 10 * 0.5 ** (48 / 72);
      expect(after[0]).toBeCloseTo(decayed + 1, 6);
      expect(after[1]).toBeCloseTo(decayed + 1, 6);
      expect(after[2]).toBeCloseTo(decayed, 6);
      expect(after[3]).toBe(0);
    });

    it("§11.2 admission tokens: uses are spent with the creation, at most max_uses, and a failed creation spends none", async () => {
      const use = { hash: h("token-1"), maxUses: 2, expiresAt: T0 + HOUR };
      expect(await made({ tokenUse: use })).toBeDefined();
      expect(await s.admissionTokenUses(use.hash)).toBe(1);
      const spent = randomBytes(8).toString("hex");
      expect(await made({ challenge: spent })).toBeDefined();
      expect(await made({ challenge: spent, tokenUse: use })).toBeUndefined(); // challenge already spent
      expect(await s.admissionTokenUses(use.hash)).toBe(1);
      expect(await made({ tokenUse: use })).toBeDefined();
      expect(await made({ tokenUse: use })).toBeUndefined();
      expect(await s.admissionTokenUses(use.hash)).toBe(2);
      expect(await s.admissionTokenUses(h("never"))).toBe(0);
      // Past its expiry the token no longer verifies, so its record is dropped by the sweep; so are dead scores.
      await s.chargeReputation({ keys: ["range:old"], charge: REP, now: T0 });
      await s.sweep(T0 + HOUR, REP);
      expect(await s.admissionTokenUses(use.hash)).toBe(0);
      expect((await s.reputation(["range:old"], REP.halfLifeMs, T0 + HOUR))[0]).toBeGreaterThan(9);
      await s.sweep(T0 + 31 * REP.halfLifeMs, REP);
      expect(await s.reputation(["range:old"], REP.halfLifeMs, T0)).toEqual([0]);
    });

    it("race: a single-use admission token spent by 8 concurrent creations admits exactly one sandbox", async () => {
      const use = { hash: h("token-race"), maxUses: 1, expiresAt: T0 + HOUR };
      const results = await Promise.all(Array.from({ length: 8 }, () => made({ tokenUse: use })));
      expect(results.filter((r) => r !== undefined)).toHaveLength(1);
    });

    it("§11.2 reputation equals the naive sum of decayed charges for any sequence of charges (property, against a reference)", async () => {
      let run = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.tuple(fc.integer({ min: 0, max: 400 * HOUR }), fc.integer({ min: 1, max: 50 })), {
            minLength: 1,
            maxLength: 8,
          }),
          fc.integer({ min: 0, max: 400 * HOUR }),
          async (charges, later) => {
            const key = `range:prop-${run++}`;
            const sorted = [...charges].sort((x, y) => x[0] - y[0]);
            for (const [t, points] of sorted)
              await s.chargeReputation({ keys: [key], charge: { points, halfLifeMs: REP.halfLifeMs }, now: T0 + t });
            const end = T0 + (sorted.at(-1)?.[0] ?? 0) + later;
            const expected = sorted.reduce((sum, [t, pts]) => sum + pts * 0.5 ** ((end - T0 - t) / REP.halfLifeMs), 0);
            const [got = -1] = await s.reputation([key], REP.halfLifeMs, end);
            expect(got).toBeCloseTo(expected, 6);
          },
        ),
        { numRuns: 25 },
      );
    });

    it("race: 8 concurrent charges of one key all count", async () => {
      await Promise.all(
        Array.from({ length: 8 }, () => s.chargeReputation({ keys: ["range:busy"], charge: REP, now: T0 })),
      );
      expect((await s.reputation(["range:busy"], REP.halfLifeMs, T0))[0]).toBeCloseTo(80, 6);
    });
  });
}

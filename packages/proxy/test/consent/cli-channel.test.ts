import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createPendingConsentStore, openPendingConsentDb, type PendingConsentStore } from "@acp/store";
import { answerPendingConsent, createCliChannel, createConsentBroker } from "../../src/consent/index.js";
import { runChannelCase, type ChannelHarness } from "./channel.case.js";
import { ManualTime, countingRandom, createTestProofs, eventually, makeAsk } from "./fixtures.js";
import { recordDeliveries } from "./recording.js";

function openStore(): { store: PendingConsentStore; close: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "acp-cli-channel-"));
  const db = openPendingConsentDb(join(dir, "state.db"));
  return {
    store: createPendingConsentStore(db),
    close: () => {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function cliHarness(time: ManualTime): Promise<ChannelHarness> {
  const { store, close } = openStore();
  const { channel, requests } = recordDeliveries(createCliChannel({ store, clock: time.clock, pollIntervalMs: 2 }));
  const answer = (id: string, input: Omit<Parameters<typeof answerPendingConsent>[1], "id" | "approverId">) => {
    const result = answerPendingConsent(store, { id, approverId: "cli:tester", ...input }, time.clock());
    expect(result.ok).toBe(true);
    return Promise.resolve();
  };
  return Promise.resolve({
    channel,
    deliveries: () => requests.length,
    shown: async (index) => {
      const request = await eventually(() => requests[index]);
      const row = await eventually(() => store.get(request.id));
      return { id: row.id, nonce: row.nonce, text: JSON.stringify([row.server, row.tool, row.request, row.reasons]) };
    },
    approve: (shown, scope = "once") => answer(shown.id, { decision: "approved", scope }),
    approveWithModifications: (shown, modifications) => answer(shown.id, { decision: "approved", modifications }),
    deny: (shown) => answer(shown.id, { decision: "denied", reason: "not now" }),
    forge: (shown) => {
      const foreign = `cr_${"0".repeat(32)}`;
      const result = answerPendingConsent(store, { id: foreign, decision: "approved", approverId: "x" }, time.clock());
      expect(result).toEqual({ ok: false, code: "consent_request_unknown" });
      expect(store.get(shown.id)?.status).toBe("pending");
      return Promise.resolve();
    },
    settledAs: (shown) =>
      eventually(() => (store.get(shown.id)?.status === "pending" ? null : store.get(shown.id)?.status)),
    close: () => Promise.resolve(close()),
  });
}

runChannelCase("cli", cliHarness, { canModify: true, editRefusedAs: /^approved$/ });

/** A broker over the CLI channel alone, on a manual clock and a fresh table; `run` gets them, then all is closed. */
async function withCliBroker(
  channelOptions: Partial<Parameters<typeof createCliChannel>[0]>,
  brokerOptions: Partial<Parameters<typeof createConsentBroker>[0]>,
  run: (parts: {
    time: ManualTime;
    store: PendingConsentStore;
    broker: ReturnType<typeof createConsentBroker>;
  }) => Promise<void>,
): Promise<void> {
  const time = new ManualTime();
  const { store, close } = openStore();
  try {
    const channel = createCliChannel({ store, clock: time.clock, pollIntervalMs: 2, ...channelOptions });
    const broker = createConsentBroker({
      channels: [channel],
      ...createTestProofs(),
      clock: time.clock,
      timers: time,
      random: countingRandom(),
      ...brokerOptions,
    });
    await run({ time, store, broker });
  } finally {
    close();
  }
}

describe("cli channel specifics", () => {
  it("refuses an answer row bound to another request's nonce (fail closed: denied)", async () => {
    await withCliBroker({}, {}, async ({ time, store, broker }) => {
      const pending = broker.ask(makeAsk());
      const row = await eventually(() => store.listPending(time.clock().getTime())[0]);
      const forged = { decision: "approved", approver: "cli:mallory", nonce: "n_00000000-0000-4000-8000-000000000000" };
      expect(store.decide(row.id, "approved", forged, time.clock().getTime()).ok).toBe(true);
      const outcome = await pending;
      expect(outcome.kind).toBe("denied");
    });
  });

  it("takes an answer recorded in time but not yet read when the request expires (acp approve said approved)", async () => {
    // the table is read every 10 s: the answer below lands between two reads
    await withCliBroker({ pollIntervalMs: 10_000 }, {}, async ({ time, store, broker }) => {
      const pending = broker.ask(makeAsk({ timeoutMs: 5_000 }));
      const row = await eventually(() => store.listPending(time.clock().getTime())[0]);
      time.advance(4_000);
      const answer = { id: row.id, decision: "approved", approverId: "cli:alice" } as const;
      expect(answerPendingConsent(store, answer, time.clock()).ok).toBe(true);
      time.advance(1_000);
      const outcome = await pending;
      expect(outcome.kind).toBe("approved");
      if (outcome.kind !== "approved") return;
      // signed when alice answered, within the request's time
      const signed = outcome.consentResponse as { readonly timestamp: string };
      expect(Date.parse(signed.timestamp)).toBe(Date.parse("2026-01-15T12:00:04.000Z"));
      expect(store.get(row.id)?.status).toBe("approved");
    });
  });

  it("stamps an answer with when `acp approve` recorded it, not when the table was next read", async () => {
    const time = new ManualTime();
    const { store, close } = openStore();
    try {
      // the table is read every 10 s of the test's clock: the answer lands 4 s in, is read at 10 s
      const channel = createCliChannel({ store, clock: time.clock, pollIntervalMs: 10_000, timers: time });
      const broker = createConsentBroker({
        channels: [channel],
        ...createTestProofs(),
        clock: time.clock,
        timers: time,
        random: countingRandom(),
      });
      const pending = broker.ask(makeAsk({ timeoutMs: 120_000 }));
      const row = await eventually(() => store.listPending(time.clock().getTime())[0]);
      time.advance(4_000);
      const answer = { id: row.id, decision: "approved", scope: "session", approverId: "cli:alice" } as const;
      expect(answerPendingConsent(store, answer, time.clock()).ok).toBe(true);
      time.advance(6_000);
      const outcome = await pending;
      expect(outcome.kind).toBe("approved");
      if (outcome.kind !== "approved") return;
      const signed = outcome.consentResponse as { readonly timestamp: string };
      expect(signed.timestamp).toBe("2026-01-15T12:00:04.000Z");
    } finally {
      close();
    }
  });

  it("still expires a request nobody answered in time, and one answered only after it expired", async () => {
    await withCliBroker({ pollIntervalMs: 10_000 }, {}, async ({ time, store, broker }) => {
      const pending = broker.ask(makeAsk({ timeoutMs: 5_000 }));
      const row = await eventually(() => store.listPending(time.clock().getTime())[0]);
      time.advance(5_000);
      expect((await pending).kind).toBe("expired");
      expect(store.get(row.id)?.status).toBe("expired");
      const late = { id: row.id, decision: "approved", approverId: "cli:bob" } as const;
      expect(answerPendingConsent(store, late, time.clock()).ok).toBe(false);
    });
  });

  it("spends the nonce of an answer it read but could not use (signing failed), so no later start takes it for unread", async () => {
    const spent: string[] = [];
    const spendNonce = (nonce: string): number => spent.push(nonce);
    const sign = (): Promise<never> => Promise.reject(new Error("no key"));
    await withCliBroker({ spendNonce }, { sign }, async ({ time, store, broker }) => {
      const pending = broker.ask(makeAsk());
      const row = await eventually(() => store.listPending(time.clock().getTime())[0]);
      const answer = { id: row.id, decision: "approved", approverId: "cli:alice" } as const;
      expect(answerPendingConsent(store, answer, time.clock()).ok).toBe(true);
      for (let i = 0; i < 10 && spent.length === 0; i++) {
        time.advance(2);
        await new Promise((r) => setTimeout(r, 5));
      }
      expect(await pending).toEqual({
        kind: "denied",
        reason: "the answer could not be signed, so it is not used: no key",
      });
      expect(spent).toEqual([row.nonce]);
    });
  });

  it("polls the row's status alone: the request's JSON is not read while it waits, only once answered", async () => {
    const time = new ManualTime();
    const { store, close } = openStore();
    try {
      const counts = { peeks: 0, gets: 0 };
      const counted: PendingConsentStore = {
        ...store,
        peek: (id) => (counts.peeks++, store.peek(id)),
        get: (id) => (counts.gets++, store.get(id)),
      };
      const channel = createCliChannel({ store: counted, clock: time.clock, pollIntervalMs: 1 });
      const broker = createConsentBroker({
        channels: [channel],
        ...createTestProofs(),
        clock: time.clock,
        timers: time,
        random: countingRandom(),
      });
      const pending = broker.ask(makeAsk());
      const row = await eventually(() => store.listPending(time.clock().getTime())[0]);
      // several polls of the table go by unanswered
      while (counts.peeks + counts.gets < 6) await new Promise((resolve) => setTimeout(resolve, 1));
      expect(counts.gets).toBe(0);
      const answer = { id: row.id, decision: "approved", approverId: "cli:alice" } as const;
      expect(answerPendingConsent(store, answer, time.clock()).ok).toBe(true);
      expect((await pending).kind).toBe("approved");
      expect(counts.gets).toBeGreaterThanOrEqual(1);
    } finally {
      close();
    }
  });

  it("lets a request be answered once: the second answer is refused as already decided", async () => {
    const time = new ManualTime();
    const { store, close } = openStore();
    try {
      const proofs = createTestProofs();
      const channel = createCliChannel({ store, clock: time.clock, pollIntervalMs: 2 });
      const broker = createConsentBroker({
        channels: [channel],
        ...proofs,
        clock: time.clock,
        timers: time,
        random: countingRandom(),
      });
      const pending = broker.ask(makeAsk());
      const row = await eventually(() => store.listPending(time.clock().getTime())[0]);
      expect(answerPendingConsent(store, { id: row.id, decision: "denied", approverId: "a" }, time.clock()).ok).toBe(
        true,
      );
      const second = answerPendingConsent(store, { id: row.id, decision: "approved", approverId: "b" }, time.clock());
      expect(second).toMatchObject({ ok: false, code: "consent_request_already_decided" });
      expect((await pending).kind).toBe("denied");
    } finally {
      close();
    }
  });
});

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createPendingConsentStore, openPendingConsentDb, type PendingConsentStore } from "@acp/store";
import {
  answerPendingConsent,
  createCliChannel,
  createConsentBroker,
  type ChannelSettlement,
  type ConsentChannel,
  type ConsentRequestV02,
  type ConsentResponseV02,
  type HumanAnswer,
} from "../../src/consent/index.js";
import { ManualTime, countingRandom, createTestProofs, eventually, makeAsk } from "./fixtures.js";

/** A terminal stand-in: shows nothing, answers when the test says, and keeps how it was told the request ended. */
function heldChannel(): ConsentChannel & {
  readonly shown: () => ConsentRequestV02 | undefined;
  answer(answer: HumanAnswer): void;
  readonly settled: ChannelSettlement[];
} {
  let request: ConsentRequestV02 | undefined;
  let resolve: ((answer: HumanAnswer) => void) | undefined;
  const settled: ChannelSettlement[] = [];
  return {
    name: "terminal",
    isAvailable: () => true,
    deliver: (delivery) => {
      request = delivery.request;
      return new Promise((r) => (resolve = r));
    },
    settle: (_request, outcome) => void settled.push(outcome),
    shown: () => request,
    answer: (answer) => resolve?.(answer),
    settled,
  };
}

describe("two people answering one request at once through different channels", () => {
  let dir: string;
  let db: ReturnType<typeof openPendingConsentDb>;
  let store: PendingConsentStore;
  let time: ManualTime;
  let terminal: ReturnType<typeof heldChannel>;
  let broker: ReturnType<typeof createConsentBroker>;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "acp-answer-race-"));
    db = openPendingConsentDb(join(dir, "state.db"));
    store = createPendingConsentStore(db);
    time = new ManualTime();
    terminal = heldChannel();
    // the CLI channel reads the table on the test's clock: once at delivery, then only when the test moves it
    const cli = createCliChannel({ store, clock: time.clock, timers: time, pollIntervalMs: 1_000 });
    broker = createConsentBroker({
      channels: [terminal, cli],
      store,
      ...createTestProofs(),
      clock: time.clock,
      timers: time,
      random: countingRandom(),
      progressIntervalMs: 0,
    });
  });
  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("an `acp deny` recorded first wins over a terminal `a` that reaches the broker before the table is read again", async () => {
    const pending = broker.ask(makeAsk());
    const request = await eventually(() => terminal.shown());
    await eventually(() => store.get(request.id));
    const denied = answerPendingConsent(
      store,
      { id: request.id, decision: "denied", reason: "not that file", approverId: "cli:bob" },
      time.clock(),
    );
    expect(denied.ok).toBe(true); // acp deny told bob: denied
    const deniedAt = time.clock().toISOString();
    time.advance(500); // the terminal's `a` half a second later, before the table is read again
    terminal.answer({ decision: "approved", scope: "session", approverId: "terminal" });
    const outcome = await pending;
    expect(outcome.kind).toBe("denied");
    // bob's answer, stamped when bob gave it
    expect(outcome).toMatchObject({
      consentResponse: { decision: "denied", approver: { id: "cli:bob", channel: "cli" }, timestamp: deniedAt },
    });
    expect(terminal.settled).toEqual(["denied"]);
    expect(store.get(request.id)).toMatchObject({ status: "denied", answer: { approver: "cli:bob" } });
    // nothing was approved for the session either
    const again = broker.ask(makeAsk());
    await eventually(() => terminal.shown()?.id !== request.id);
    terminal.answer({ decision: "denied", approverId: "terminal" });
    expect((await again).kind).toBe("denied");
  });

  it("a terminal answer is recorded in the table first, so a later `acp approve` is refused as already decided", async () => {
    const pending = broker.ask(makeAsk());
    const request = await eventually(() => terminal.shown());
    terminal.answer({ decision: "denied", reason: "no", approverId: "terminal" });
    expect((await pending).kind).toBe("denied");
    expect(store.get(request.id)).toMatchObject({
      status: "denied",
      answer: { decision: "denied", approver: "terminal", channel: "terminal", nonce: request.nonce },
    });
    const late = answerPendingConsent(
      store,
      { id: request.id, decision: "approved", approverId: "cli:bob" },
      time.clock(),
    );
    expect(late).toMatchObject({ ok: false, code: "consent_request_already_decided" });
  });

  it("an approval through the terminal keeps its scope and channel in the signed response", async () => {
    const pending = broker.ask(makeAsk());
    const request = await eventually(() => terminal.shown());
    terminal.answer({ decision: "approved", approverId: "terminal" });
    const outcome = await pending;
    expect(outcome.kind).toBe("approved");
    const response = (outcome as { consentResponse: ConsentResponseV02 }).consentResponse;
    expect(response).toMatchObject({
      approver: { id: "terminal", channel: "terminal" },
      conditions: { scope: "once" },
    });
    expect(store.get(request.id)?.status).toBe("approved");
  });
});

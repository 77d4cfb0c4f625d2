/**
 * An approval with edits is judged (`ConsentAsk.judgeEdited`) before any channel hears how the request ended:
 * a channel never says `approved` of an edit the recheck refuses (`edit_refused`, with why) or puts to a
 * person again (`edit_asked`), and neither is remembered for the session or a time window.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createPendingConsentStore, openPendingConsentDb } from "@acp/store";
import { formatSettledMessage, settledLine } from "../../src/consent/channels/telegram/message.js";
import {
  type ChannelSettlement,
  type ConsentChannel,
  type HumanAnswer,
  type SettledBy,
} from "../../src/consent/index.js";
import type { JudgeEdited } from "../../src/gate/edit-judgement.js";
import { ManualTime, PLANTED_TOKEN, askDecision, makeAsk, manualBroker, refuseEditsUnderEtc } from "./fixtures.js";

interface Settled {
  readonly id: string;
  readonly outcome: ChannelSettlement;
  readonly by?: SettledBy;
  readonly reason?: string;
}

/** A channel answering every request with `answer`, recording what it was told of each end. */
function answering(answer: Omit<HumanAnswer, "approverId">): ConsentChannel & {
  settled: Settled[];
  delivered: number;
} {
  const channel = {
    name: "terminal",
    settled: [] as Settled[],
    delivered: 0,
    isAvailable: () => true,
    deliver: () => {
      channel.delivered++;
      return Promise.resolve({ ...answer, approverId: "terminal:alice" });
    },
    settle: (request: { id: string }, outcome: ChannelSettlement, by?: SettledBy, reason?: string) => {
      channel.settled.push({
        id: request.id,
        outcome,
        ...(by !== undefined ? { by } : {}),
        ...(reason ? { reason } : {}),
      });
    },
  };
  return channel;
}

const homes: string[] = [];
afterEach(() => {
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
});

function brokerFor(channel: ConsentChannel, extra: Parameters<typeof manualBroker>[2] = {}) {
  return manualBroker([channel], new ManualTime(), extra);
}

const toEtc = { decision: "approved_with_modifications", modifications: { path: "/etc/shadow" } } as const;

describe("an approval with edits, told to the channels", () => {
  it("is told as `edit_refused` with the refusal (redacted) when the recheck refuses it, and not remembered", async () => {
    const channel = answering({ ...toEtc, scope: "session" });
    const broker = brokerFor(channel);
    const judged: Record<string, unknown>[] = [];
    const outcome = await broker.ask(makeAsk({ judgeEdited: refuseEditsUnderEtc(judged) }));
    // the broker hands back the approval, with the arguments it judged: the caller takes that judgement
    expect(outcome).toMatchObject({ kind: "approved", arguments: { path: "/etc/shadow" } });
    if (outcome.kind === "approved") expect(judged[0]).toBe(outcome.arguments);
    expect(channel.settled).toEqual([
      {
        id: expect.stringMatching(/^cr_/) as string,
        outcome: "edit_refused",
        by: { approverId: "terminal:alice", channel: "terminal" },
        reason:
          "refused by policy rule `no-etc`: rule `no-etc` matched: deny (path /etc/shadow, with Bearer [redacted])",
      },
    ]);
    expect(JSON.stringify(channel.settled)).not.toContain(PLANTED_TOKEN);
    // a "for this session" given with a refused edit answers nothing later: the same call is asked again
    await broker.ask(makeAsk({ judgeEdited: refuseEditsUnderEtc() }));
    expect(channel.delivered).toBe(2);
  });

  it("is told as `edit_asked` when the edit is put to a person again, and not remembered", async () => {
    const channel = answering({ ...toEtc, scope: "session" });
    const broker = brokerFor(channel);
    const askedAgain: JudgeEdited = () =>
      Promise.resolve({
        kind: "asked",
        decision: askDecision({ rule: "policy:ask-etc" }),
        answered: { rules: ["policy:ask-writes", "policy:ask-etc"], level: "medium" },
        why: "the edited arguments fall under policy rule `ask-etc`",
      });
    expect((await broker.ask(makeAsk({ judgeEdited: askedAgain }))).kind).toBe("approved");
    expect(channel.settled.map((s) => s.outcome)).toEqual(["edit_asked"]);
    await broker.ask(makeAsk({ judgeEdited: askedAgain }));
    expect(channel.delivered).toBe(2);
  });

  it("is told as `approved`, and remembered for the session, when the edit stands", async () => {
    const channel = answering({
      decision: "approved_with_modifications",
      modifications: { path: "/tmp/safe.txt" },
      scope: "session",
    });
    const broker = brokerFor(channel);
    const judged: Record<string, unknown>[] = [];
    const first = await broker.ask(makeAsk({ judgeEdited: refuseEditsUnderEtc(judged) }));
    expect(first).toMatchObject({ kind: "approved", arguments: { path: "/tmp/safe.txt" } });
    expect(judged).toHaveLength(1);
    expect(channel.settled.map((s) => s.outcome)).toEqual(["approved"]);
    expect(await broker.ask(makeAsk({ judgeEdited: refuseEditsUnderEtc(judged) }))).toMatchObject({
      kind: "approved",
      arguments: { path: "/tmp/safe.txt" },
    });
    expect(channel.delivered).toBe(1);
  });

  it("asks no judgement of an approval without edits", async () => {
    const channel = answering({ decision: "approved" });
    const judged: Record<string, unknown>[] = [];
    expect((await brokerFor(channel).ask(makeAsk({ judgeEdited: refuseEditsUnderEtc(judged) }))).kind).toBe("approved");
    expect(judged).toEqual([]);
    expect(channel.settled.map((s) => s.outcome)).toEqual(["approved"]);
  });

  it("is told as `edit_refused` when the judgement fails (fail closed)", async () => {
    const channel = answering(toEtc);
    const failing: JudgeEdited = () => Promise.reject(new Error("policy store unreachable"));
    expect((await brokerFor(channel).ask(makeAsk({ judgeEdited: failing }))).kind).toBe("approved");
    expect(channel.settled).toMatchObject([
      {
        outcome: "edit_refused",
        reason: expect.stringContaining("the edited arguments could not be judged: policy store unreachable") as string,
      },
    ]);
  });

  it("closes the pending-table row as `denied` when the edit is refused, `approved` when it is asked again", async () => {
    const home = mkdtempSync(join(tmpdir(), "acp-edit-settle-"));
    homes.push(home);
    const db = openPendingConsentDb(join(home, "state.db"));
    const store = createPendingConsentStore(db);
    try {
      const channel = answering(toEtc);
      const broker = brokerFor(channel, { store });
      await broker.ask(makeAsk({ judgeEdited: refuseEditsUnderEtc() }));
      const askedAgain: JudgeEdited = () =>
        Promise.resolve({
          kind: "asked",
          decision: askDecision(),
          answered: { rules: ["policy:ask-writes"], level: "high" },
          why: "stronger",
        });
      await broker.ask(makeAsk({ judgeEdited: askedAgain }));
      const statuses = channel.settled.map((s) => store.get(s.id)?.status);
      expect(statuses).toEqual(["denied", "approved"]);
    } finally {
      db.close();
    }
  });
});

describe("Telegram's settled line for an edit", () => {
  const by = { who: "Ana (4242)", channel: "telegram" };

  it("names who approved with edits and why the edit was refused, within 200 characters for the button's answer", () => {
    expect(settledLine("edit_refused", by, "refused by policy rule `no-etc`")).toBe(
      "⛔ approved with edits by Ana (4242) via telegram, but the edited arguments are refused by policy rule `no-etc`",
    );
    expect(settledLine("edit_asked", by)).toBe(
      "✏️ approved with edits by Ana (4242) via telegram; the edited arguments are asked again (a new request follows)",
    );
    const long = settledLine("edit_refused", by, `refused by policy rule \`x\`: ${"a".repeat(5_000)}`);
    expect(long.length).toBeLessThanOrEqual(200);
    expect(long).toMatch(/… \(truncated\)$/);
  });

  it("keeps the edited message within Telegram's 4096 characters whatever the reason's length", () => {
    const original = "b".repeat(3_996);
    const text = formatSettledMessage(original, "edit_refused", by, `refused: ${"\u202e".repeat(2_000)}`);
    expect(text.length).toBeLessThanOrEqual(4_096);
    expect(text.startsWith(original)).toBe(true);
    // a control character in the reason is shown escaped, never raw
    expect(text).not.toContain("\u202e");
  });
});

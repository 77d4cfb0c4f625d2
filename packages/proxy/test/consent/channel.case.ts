/**
 * The one suite every consent channel passes: approve, deny, approve with modifications, session scope, expiry,
 * withdrawal, forged or foreign answers refused, secrets never shown. Each channel supplies a harness that plays
 * the person on the other side.
 */
import { afterEach, describe, expect, it } from "vitest";
import {
  createConsentBroker,
  type ConsentChannel,
  type ConsentResponseV02,
  type HumanAnswer,
} from "../../src/consent/index.js";
import type { ConsentAsk } from "../../src/gate/types.js";
import {
  ManualTime,
  countingRandom,
  createTestProofs,
  eventually,
  makeAsk,
  PLANTED_TOKEN,
  refuseEditsUnderEtc,
} from "./fixtures.js";

/** A request as the person sees it. */
export interface Shown {
  readonly id: string;
  readonly nonce: string;
  /** Everything the channel showed about it (text, JSON). */
  readonly text: string;
}

/** The person on the other side of one channel. */
export interface ChannelHarness {
  readonly channel: ConsentChannel;
  /** Resolves with the n-th (0-based) request delivered. */
  shown(index: number): Promise<Shown>;
  /** How many requests were delivered so far. */
  deliveries(): number;
  approve(request: Shown, scope?: "once" | "session"): Promise<void>;
  approveWithModifications(request: Shown, modifications: Record<string, unknown>): Promise<void>;
  deny(request: Shown): Promise<void>;
  /** Sends an approval the channel must refuse (forged, foreign, from the wrong place). */
  forge(request: Shown): Promise<void>;
  /** What the channel shows once the request ended (a row status, an edited message), when it shows anything. */
  settledAs(request: Shown): Promise<string>;
  close(): Promise<void>;
}

/** Runs the shared suite against one channel. */
export function runChannelCase(
  name: string,
  setup: (time: ManualTime) => Promise<ChannelHarness>,
  options: {
    readonly canModify: boolean;
    /**
     * What the channel shows of an approval with edits the caller's recheck refuses (`edit_refused`); for a
     * channel that takes no edits, of one given through another channel.
     */
    readonly editRefusedAs: RegExp;
  },
): void {
  describe(`consent channel: ${name}`, () => {
    let harness: ChannelHarness | undefined;
    afterEach(async () => {
      await harness?.close();
      harness = undefined;
    });

    async function start(more: readonly ConsentChannel[] = []): Promise<{
      h: ChannelHarness;
      time: ManualTime;
      proofs: ReturnType<typeof createTestProofs>;
      ask: (overrides?: Partial<ConsentAsk>) => ReturnType<ReturnType<typeof createConsentBroker>["ask"]>;
    }> {
      const time = new ManualTime();
      const h = await setup(time);
      harness = h;
      const proofs = createTestProofs();
      const broker = createConsentBroker({
        channels: [h.channel, ...more],
        sign: proofs.sign,
        verify: proofs.verify,
        clock: time.clock,
        random: countingRandom(),
        timers: time,
        progressIntervalMs: 0,
      });
      return { h, time, proofs, ask: (overrides = {}) => broker.ask(makeAsk(overrides)) };
    }

    it("approves: the answer comes back signed, verifiable with the public key alone", async () => {
      const { h, proofs, ask } = await start();
      const pending = ask();
      const shown = await h.shown(0);
      await h.approve(shown);
      const outcome = await pending;
      expect(outcome.kind).toBe("approved");
      if (outcome.kind !== "approved") return;
      expect(outcome.scope).toBe("once");
      expect(outcome.arguments).toEqual(makeAsk().arguments);
      const response = outcome.consentResponse as ConsentResponseV02;
      expect(response).toMatchObject({ request_id: shown.id, nonce: shown.nonce, decision: "approved" });
      expect(response.approver.channel).toBe(h.channel.name);
      expect(response.conditions).toMatchObject({ single_use: true, scope: "once" });
      const request = { action: { server: "fs", tool: "write_file" } } as Parameters<typeof proofs.verifyWith>[2];
      expect(proofs.verifyWith(proofs.publicKey, response, request, makeAsk().arguments)).toBe(true);
      expect(await h.settledAs(shown)).toMatch(/approved/);
    });

    it("denies when the person denies, with a signed denial", async () => {
      const { h, ask } = await start();
      const pending = ask();
      await h.deny(await h.shown(0));
      const outcome = await pending;
      expect(outcome.kind).toBe("denied");
      if (outcome.kind === "denied") expect((outcome.consentResponse as ConsentResponseV02).decision).toBe("denied");
    });

    it("never shows a secret argument", async () => {
      const { h, ask } = await start();
      const pending = ask();
      const shown = await h.shown(0);
      expect(shown.text).not.toContain("s3cret-value");
      expect(shown.text).toContain("[redacted]");
      expect(shown.text).toContain("write_file");
      await h.deny(shown);
      await pending;
    });

    if (options.canModify) {
      it("forwards the modified arguments when approved with modifications, secrets kept", async () => {
        const { h, ask } = await start();
        const pending = ask();
        await h.approveWithModifications(await h.shown(0), { path: "/tmp/safe.txt" });
        const outcome = await pending;
        expect(outcome).toMatchObject({
          kind: "approved",
          arguments: { path: "/tmp/safe.txt", content: "hello", api_token: "s3cret-value" },
        });
        if (outcome.kind === "approved") {
          const response = outcome.consentResponse as ConsentResponseV02;
          expect(response.decision).toBe("approved_with_modifications");
          expect(JSON.stringify(response)).not.toContain("s3cret-value");
        }
      });
    }

    it("says so when an approval with edits is refused by the rules the edit falls under, never `approved`", async () => {
      // a channel that takes no edits hears of one made through another channel (a terminal, `acp approve`)
      const edited = { path: "/etc/shadow" };
      let edit: (() => void) | undefined;
      const editor: ConsentChannel = {
        name: "cli",
        isAvailable: () => true,
        deliver: () =>
          new Promise<HumanAnswer>((resolve) => {
            edit = () =>
              resolve({ decision: "approved_with_modifications", modifications: edited, approverId: "cli:alice" });
          }),
      };
      const { h, ask } = await start(options.canModify ? [] : [editor]);
      const judged: Record<string, unknown>[] = [];
      const pending = ask({ judgeEdited: refuseEditsUnderEtc(judged) });
      const shown = await h.shown(0);
      if (options.canModify) await h.approveWithModifications(shown, edited);
      else (await eventually(() => edit))();
      // the broker hands the approval back (the caller, which judged it, refuses the call)
      expect(await pending).toMatchObject({ kind: "approved", arguments: { path: "/etc/shadow" } });
      expect(judged).toHaveLength(1);
      const settled = await h.settledAs(shown);
      expect(settled).toMatch(options.editRefusedAs);
      // the refusal's text quotes a token: a channel shows it redacted
      expect(settled).not.toContain(PLANTED_TOKEN);
    });

    it("approves the same call again in the same session without asking, and asks for other arguments", async () => {
      const { h, ask } = await start();
      const first = ask();
      await h.approve(await h.shown(0), "session");
      expect(await first).toMatchObject({ kind: "approved", scope: "session" });
      const again = await ask();
      expect(again).toMatchObject({ kind: "approved", scope: "session" });
      expect(h.deliveries()).toBe(1);
      const otherSession = ask({ sessionId: "session-2" });
      await h.deny(await h.shown(1));
      expect((await otherSession).kind).toBe("denied");
      const otherArgs = ask({ arguments: { path: "/etc/passwd", content: "x" } });
      await h.deny(await h.shown(2));
      expect((await otherArgs).kind).toBe("denied");
    });

    it("expires when nobody answers in time, and says so on the channel", async () => {
      const { h, time, ask } = await start();
      const pending = ask({ timeoutMs: 60_000 });
      const shown = await h.shown(0);
      time.advance(60_000);
      expect(await pending).toEqual({ kind: "expired" });
      expect(await h.settledAs(shown)).toMatch(/expired/);
    });

    it("withdraws the request when the client cancels", async () => {
      const { h, ask } = await start();
      const controller = new AbortController();
      const pending = ask({ signal: controller.signal });
      const shown = await h.shown(0);
      controller.abort();
      expect(await pending).toEqual({ kind: "withdrawn" });
      expect(await h.settledAs(shown)).toMatch(/withdrawn/);
    });

    it("reports when the person answered, by the clock it is given, so a later read is stamped then", async () => {
      const time = new ManualTime();
      const h = await setup(time);
      harness = h;
      const reported: HumanAnswer[] = [];
      const inner = h.channel;
      const channel: ConsentChannel = {
        name: inner.name,
        isAvailable: () => inner.isAvailable(),
        deliver: async (delivery) => {
          const answer = await inner.deliver(delivery);
          reported.push(answer);
          return answer;
        },
        settle: (request, outcome, by) => inner.settle?.(request, outcome, by),
      };
      const broker = createConsentBroker({
        channels: [channel],
        ...createTestProofs(),
        clock: time.clock,
        random: countingRandom(),
        timers: time,
        progressIntervalMs: 0,
      });
      const pending = broker.ask(makeAsk());
      const shown = await h.shown(0);
      time.advance(5_000);
      await h.approve(shown);
      expect((await pending).kind).toBe("approved");
      expect(reported[0]?.answeredAtMs).toBe(time.clock().getTime());
    });

    it("refuses a forged or foreign answer and keeps waiting for the real one", async () => {
      const { h, ask } = await start();
      const pending = ask();
      const shown = await h.shown(0);
      await h.forge(shown);
      await h.deny(shown);
      expect((await pending).kind).toBe("denied");
      await eventually(() => h.deliveries() === 1);
    });
  });
}

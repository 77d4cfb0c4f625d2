/**
 * An edit a person made that lands under another `ask` rule is asked again (`judgeEdit`); a remembered
 * approval "for this session" of the same tool and the edited arguments answers that question as it would
 * answer a fresh call with them — no looser: another session, another agent or other arguments are asked.
 */
import { describe, expect, it } from "vitest";
import type { ActionRequest } from "@acp/core";
import { createConsentBroker, type ConsentChannel, type HumanAnswer } from "../../src/consent/index.js";
import type { Decide } from "../../src/index.js";
import { connectClient, decision, fixture, memoryAudit, startInMemory, textOf } from "../harness.js";
import { createTestProofs } from "./fixtures.js";

/** `transfer` asks under `ask-transfers` below 100 and under `ask-big-transfers` (level high) from 100. */
const twoAskRules: Decide = (request: ActionRequest) => {
  const amount = request.arguments["amount"] as number;
  if (request.tool !== "transfer") return Promise.resolve(decision("accept"));
  if (amount >= 100) return Promise.resolve(decision("ask", "policy:ask-big-transfers", { level: "high" }));
  return Promise.resolve(decision("ask", "policy:ask-transfers", { level: "medium" }));
};

/** A channel answering each delivered request by `script` (on the amount it shows), counting deliveries. */
function scriptedChannel(script: (amount: number) => Omit<HumanAnswer, "approverId">): ConsentChannel & {
  asked: number[];
} {
  const asked: number[] = [];
  return {
    name: "cli",
    asked,
    isAvailable: () => true,
    deliver: (delivery) => {
      const amount = delivery.request.action.parameters["amount"] as number;
      asked.push(amount);
      return Promise.resolve({ ...script(amount), approverId: "cli:alice" });
    },
  };
}

async function withProxy(
  script: (amount: number) => Omit<HumanAnswer, "approverId">,
  run: (env: Awaited<ReturnType<typeof startInMemory>>, channel: ReturnType<typeof scriptedChannel>) => Promise<void>,
): Promise<void> {
  const channel = scriptedChannel(script);
  const broker = createConsentBroker({ channels: [channel], ...createTestProofs(), clock: () => new Date() });
  const env = await startInMemory({ upstreams: [fixture()], decide: twoAskRules, broker, audit: memoryAudit() });
  try {
    await run(env, channel);
  } finally {
    await env.close();
    await broker.close();
  }
}

describe("a re-asked edit and the session's remembered approvals", () => {
  it("an edit onto arguments approved for this session is answered by that approval, nobody asked again", async () => {
    await withProxy(
      (amount) =>
        amount === 5
          ? { decision: "approved_with_modifications", modifications: { amount: 500 } }
          : { decision: "approved", scope: "session" },
      async (env, channel) => {
        expect(textOf(await env.client.callTool({ name: "transfer", arguments: { amount: 500 } }))).toBe(
          "transferred 500",
        );
        expect(channel.asked).toEqual([500]);
        // 5 → 500 falls under ask-big-transfers, which this session approved for 500
        expect(textOf(await env.client.callTool({ name: "transfer", arguments: { amount: 5 } }))).toBe(
          "transferred 500",
        );
        expect(channel.asked).toEqual([500, 5]);
      },
    );
  });

  it("an approval the person gave with edits, for this session, answers a re-asked edit onto what it forwards", async () => {
    await withProxy(
      (amount) =>
        amount === 400
          ? { decision: "approved_with_modifications", modifications: { amount: 500 }, scope: "session" }
          : amount === 5
            ? { decision: "approved_with_modifications", modifications: { amount: 500 } }
            : { decision: "denied", reason: "asked again" },
      async (env, channel) => {
        expect(textOf(await env.client.callTool({ name: "transfer", arguments: { amount: 400 } }))).toBe(
          "transferred 500",
        );
        // a fresh call with what that approval forwards is not asked (the session remembers it) …
        expect(textOf(await env.client.callTool({ name: "transfer", arguments: { amount: 500 } }))).toBe(
          "transferred 500",
        );
        expect(channel.asked).toEqual([400]);
        // … and neither is an edit onto it that is asked again
        expect(textOf(await env.client.callTool({ name: "transfer", arguments: { amount: 5 } }))).toBe(
          "transferred 500",
        );
        expect(channel.asked).toEqual([400, 5]);
      },
    );
  });

  it("other arguments than the remembered ones are asked again (a match as exact as a fresh call's)", async () => {
    await withProxy(
      (amount) =>
        amount === 5
          ? { decision: "approved_with_modifications", modifications: { amount: 501 } }
          : amount === 501
            ? { decision: "denied", reason: "not 501" }
            : { decision: "approved", scope: "session" },
      async (env, channel) => {
        await env.client.callTool({ name: "transfer", arguments: { amount: 500 } });
        const result = await env.client.callTool({ name: "transfer", arguments: { amount: 5 } });
        expect(result.isError).toBe(true);
        expect(textOf(result)).toMatch(/^denied by a person: .*not 501/);
        expect(channel.asked).toEqual([500, 5, 501]);
      },
    );
  });

  it("an approval remembered in another session does not answer the re-asked edit", async () => {
    await withProxy(
      (amount) =>
        amount === 400
          ? { decision: "approved_with_modifications", modifications: { amount: 500 }, scope: "session" }
          : amount === 5
            ? { decision: "approved_with_modifications", modifications: { amount: 500 } }
            : { decision: "denied", reason: "other session" },
      async (env, channel) => {
        await env.client.callTool({ name: "transfer", arguments: { amount: 400 } });
        const other = await connectClient(env.proxy);
        try {
          const result = await other.callTool({ name: "transfer", arguments: { amount: 5 } });
          expect(textOf(result)).toMatch(/^denied by a person: .*other session/);
          expect(channel.asked).toEqual([400, 5, 500]);
        } finally {
          await other.close();
        }
      },
    );
  });
});

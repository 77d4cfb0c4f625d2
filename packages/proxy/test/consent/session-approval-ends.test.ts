import { describe, expect, it } from "vitest";
import { type ApprovalScope, type ConsentChannel } from "../../src/consent/index.js";
import { createApprovalMemory } from "../../src/gate/approval-memory.js";
import { decideByTool, fixture, startInMemory, textOf } from "../harness.js";
import { ManualTime, manualBroker } from "./fixtures.js";

/** A channel whose person approves every request with the scope the test chose, counting the requests. */
function approvingChannel(scope: ApprovalScope): ConsentChannel & { readonly asked: () => number } {
  let asked = 0;
  return {
    name: "terminal",
    isAvailable: () => true,
    deliver: () => {
      asked++;
      return Promise.resolve({ decision: "approved", scope, approverId: "terminal" });
    },
    asked: () => asked,
  };
}

describe("an approval for the session lasts no longer than its signed response says", () => {
  it("asks again once the 12 hours the broker signed are over, though the client's session goes on", async () => {
    const time = new ManualTime();
    const channel = approvingChannel("session");
    const broker = manualBroker([channel], time);
    const env = await startInMemory({
      upstreams: [fixture()],
      decide: decideByTool({ transfer: "ask" }),
      broker,
      now: time.clock,
    });
    try {
      const call = { name: "transfer", arguments: { amount: 7 } };
      expect(textOf(await env.client.callTool(call))).toBe("transferred 7");
      time.advance(11 * 3_600_000);
      expect(textOf(await env.client.callTool(call))).toBe("transferred 7");
      expect(channel.asked()).toBe(1);
      time.advance(2 * 3_600_000);
      expect(textOf(await env.client.callTool(call))).toBe("transferred 7");
      expect(channel.asked()).toBe(2);
    } finally {
      await env.close();
      await broker.close();
    }
  });

  it("a remembered approval whose response signs no end, or an end already past, is not reused", () => {
    const memory = createApprovalMemory();
    const now = new Date("2026-01-15T12:00:00.000Z");
    const remember = (tool: string, approval: Parameters<typeof memory.remember>[4]): void =>
      memory.remember("s", "srv", tool, {}, approval);
    remember("unsigned", { scope: "session", consentResponse: {} });
    remember("ended", {
      scope: "session",
      consentResponse: { conditions: { valid_until: "2026-01-15T11:59:59.000Z" } },
    });
    remember("window-past-signed", {
      scope: { until: "2026-01-16T00:00:00.000Z" },
      consentResponse: { conditions: { valid_until: "2026-01-15T11:00:00.000Z" } },
    });
    remember("live", {
      scope: "session",
      consentResponse: { conditions: { valid_until: "2026-01-15T12:00:01.000Z" } },
    });
    for (const tool of ["unsigned", "ended", "window-past-signed"])
      expect(memory.find("s", "srv", tool, {}, now)).toBeUndefined();
    expect(memory.find("s", "srv", "live", {}, now)).toBeDefined();
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CallToolResultSchema, type Progress } from "@modelcontextprotocol/sdk/types.js";
import { connectClient, decideByTool, fixture, memoryAudit, scriptedBroker, startInMemory, textOf } from "./harness.js";
import type { ConsentAsk, ConsentOutcome } from "../src/index.js";

/** Each test picks the broker's answer by the `amount` argument of `transfer`. */
const answers = new Map<number, (ask: ConsentAsk) => ConsentOutcome | "wait" | Promise<ConsentOutcome>>();

describe("ask and defer wait for a person through the broker", () => {
  const audit = memoryAudit();
  const broker = scriptedBroker((ask) =>
    (answers.get(ask.arguments["amount"] as number) ?? (() => ({ kind: "expired" })))(ask),
  );
  let env: Awaited<ReturnType<typeof startInMemory>>;
  beforeAll(async () => {
    env = await startInMemory({
      upstreams: [fixture()],
      decide: decideByTool({ transfer: "ask", echo: "defer" }),
      broker,
      audit,
      consentTimeoutMs: 7_000,
      progressIntervalMs: 20,
    });
  });
  afterAll(async () => env.close());
  const eventsOf = (amount: number): string[] => {
    const ids = new Set(
      audit.events
        .filter(
          (e) => e.type === "tool_call_intercepted" && (e.fields["arguments"] as { amount?: number }).amount === amount,
        )
        .map((e) => e.fields["call_id"]),
    );
    return audit.events.filter((e) => ids.has(e.fields["call_id"])).map((e) => e.type);
  };

  it("ask → approve forwards the call and audits every step", async () => {
    answers.set(1, () => ({
      kind: "approved",
      arguments: { amount: 1 },
      consentResponse: { sig: "x" },
      scope: "once",
    }));
    const result = await env.client.callTool({ name: "transfer", arguments: { amount: 1 } });
    expect(textOf(result)).toBe("transferred 1");
    expect(eventsOf(1)).toEqual([
      "tool_call_intercepted",
      "policy_evaluated",
      "consent_requested",
      "consent_approved",
      "tool_call_forwarded",
      "tool_call_completed",
    ]);
    const ask = broker.asks.find((a) => a.arguments["amount"] === 1);
    expect(ask?.server).toBe("fixture");
    expect(ask?.tool).toBe("transfer");
    expect(ask?.timeoutMs).toBe(7_000);
    expect(ask?.decision.route).toBe("ask");
    expect(ask?.agent).toBe("test-agent");
  });

  it("consent_requested carries the consent request id (cr_…) the broker gave the request, once", async () => {
    const id = `cr_${"c".repeat(32)}`;
    answers.set(31, async (ask) => {
      await ask.onRequested?.({ id, expiresAt: "2026-01-01T00:02:00.000Z" });
      return { kind: "approved", arguments: { amount: 31 }, consentResponse: { request_id: id }, scope: "once" };
    });
    expect(textOf(await env.client.callTool({ name: "transfer", arguments: { amount: 31 } }))).toBe("transferred 31");
    const requested = audit.events.filter(
      (e) => e.type === "consent_requested" && eventsOf(31).length > 0 && e.fields["request_id"] === id,
    );
    expect(requested).toHaveLength(1);
    expect(eventsOf(31).filter((t) => t === "consent_requested")).toHaveLength(1);
    expect(requested[0]?.fields["expires_at"]).toBe("2026-01-01T00:02:00.000Z");
    // the request's end names it too, also when no signed response does (expired, withdrawn)
    answers.set(33, async (ask) => {
      await ask.onRequested?.({ id: `cr_${"d".repeat(32)}`, expiresAt: "2026-01-01T00:02:00.000Z" });
      return { kind: "expired" };
    });
    await env.client.callTool({ name: "transfer", arguments: { amount: 33 } });
    const expired = audit.events.filter((e) => e.type === "consent_expired" && e.fields["request_id"] !== undefined);
    expect(expired.map((e) => e.fields["request_id"])).toEqual([`cr_${"d".repeat(32)}`]);
    // a broker that never says (denied before any request was made): still one consent_requested, no id
    answers.set(32, () => ({ kind: "denied", reason: "no consent channel is available" }));
    await env.client.callTool({ name: "transfer", arguments: { amount: 32 } });
    expect(eventsOf(32)).toEqual(["tool_call_intercepted", "policy_evaluated", "consent_requested", "consent_denied"]);
  });

  it("an approval the broker reused (a stored window) asks nobody: no consent_requested, the approval says reused", async () => {
    const response = { request_id: `cr_${"e".repeat(32)}`, decision: "approved" };
    answers.set(36, () => ({
      kind: "approved",
      arguments: { amount: 36 },
      consentResponse: response,
      scope: { until: "2099-01-01T00:00:00.000Z" },
      reused: true,
    }));
    expect(textOf(await env.client.callTool({ name: "transfer", arguments: { amount: 36 } }))).toBe("transferred 36");
    expect(eventsOf(36)).toEqual([
      "tool_call_intercepted",
      "policy_evaluated",
      "consent_approved",
      "tool_call_forwarded",
      "tool_call_completed",
    ]);
    const approved = audit.events.find(
      (e) => e.type === "consent_approved" && e.fields["request_id"] === response.request_id,
    );
    expect(approved?.fields["reused"]).toBe(true);
  });

  it("a denial no person gave (no channel, a response that failed verification) does not say a person denied", async () => {
    answers.set(34, () => ({ kind: "denied", reason: "no consent channel is available" }));
    const result = await env.client.callTool({ name: "transfer", arguments: { amount: 34 } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe("consent not given: no consent channel is available");
    // an approval the audit could not record carries its (approving) signed response: still no person's no
    answers.set(35, () => ({
      kind: "denied",
      reason: "the audit trail could not record the approval",
      consentResponse: { decision: "approved" },
    }));
    const unrecorded = await env.client.callTool({ name: "transfer", arguments: { amount: 35 } });
    expect(textOf(unrecorded)).toBe("consent not given: the audit trail could not record the approval");
  });

  it("ask → deny returns a tool error with the person's reason and never forwards", async () => {
    answers.set(2, () => ({ kind: "denied", reason: "not today", consentResponse: { decision: "denied" } }));
    const result = await env.client.callTool({ name: "transfer", arguments: { amount: 2 } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe("denied by a person: not today");
    expect(eventsOf(2)).toContain("consent_denied");
    expect(eventsOf(2)).not.toContain("tool_call_forwarded");
  });

  it("ask → timeout is a denial audited as consent_expired", async () => {
    answers.set(3, () => ({ kind: "expired" }));
    const result = await env.client.callTool({ name: "transfer", arguments: { amount: 3 } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("expired");
    expect(eventsOf(3)).toContain("consent_expired");
  });

  it("a decision's own timeout (seconds) sets the broker's wait", async () => {
    // decide via the default script; rule timeouts are covered by the gate unit test
    answers.set(4, () => ({ kind: "expired" }));
    await env.client.callTool({ name: "transfer", arguments: { amount: 4 } });
    expect(broker.asks.find((a) => a.arguments["amount"] === 4)?.timeoutMs).toBe(7_000);
  });

  it("approve with edits forwards the modified arguments", async () => {
    answers.set(5, () => ({ kind: "approved", arguments: { amount: 50 }, consentResponse: {}, scope: "once" }));
    const result = await env.client.callTool({ name: "transfer", arguments: { amount: 5 } });
    expect(textOf(result)).toBe("transferred 50");
    const approved = audit.events.find((e) => e.type === "consent_approved" && e.fields["modified"] === true);
    expect(approved?.fields["forwarded_arguments"]).toEqual({ amount: 50 });
  });

  it("session scope: the same call again in the same session is not asked again; another session is", async () => {
    // the response signs how long the session approval lasts (the broker's 12 hours; here far ahead)
    const consentResponse = { conditions: { scope: "session", valid_until: "2999-01-01T00:00:00.000Z" } };
    answers.set(6, () => ({ kind: "approved", arguments: { amount: 6 }, consentResponse, scope: "session" }));
    await env.client.callTool({ name: "transfer", arguments: { amount: 6 } });
    answers.set(6, () => ({
      kind: "denied",
      reason: "second session must ask",
      consentResponse: { decision: "denied" },
    }));
    const again = await env.client.callTool({ name: "transfer", arguments: { amount: 6 } });
    expect(textOf(again)).toBe("transferred 6");
    expect(broker.asks.filter((a) => a.arguments["amount"] === 6)).toHaveLength(1);
    const other = await connectClient(env.proxy);
    const elsewhere = await other.callTool({ name: "transfer", arguments: { amount: 6 } });
    expect(textOf(elsewhere)).toBe("denied by a person: second session must ask");
    await other.close();
  });

  it("sends progress while waiting when the client gave a progress token, in increasing order", async () => {
    let release: (o: ConsentOutcome) => void = () => undefined;
    const held = new Promise<ConsentOutcome>((resolve) => (release = resolve));
    answers.set(7, (ask) => {
      ask.onProgress?.("sent to the terminal");
      return held;
    });
    const ticks: Progress[] = [];
    const result = await env.client.request(
      { method: "tools/call", params: { name: "transfer", arguments: { amount: 7 } } },
      CallToolResultSchema,
      {
        onprogress: (p) => {
          ticks.push(p);
          if (ticks.length === 3)
            release({ kind: "approved", arguments: { amount: 7 }, consentResponse: {}, scope: "once" });
        },
      },
    );
    expect(textOf(result)).toBe("transferred 7");
    expect(ticks.length).toBeGreaterThanOrEqual(3);
    const values = ticks.map((t) => t.progress);
    expect(values).toEqual([...values].sort((a, b) => a - b));
    expect(new Set(values).size).toBe(values.length);
    expect(ticks[0]?.message).toBe("sent to the terminal");
  });

  it("pending calls are independent: a waiting call does not hold up others", async () => {
    let release: (o: ConsentOutcome) => void = () => undefined;
    answers.set(8, () => new Promise<ConsentOutcome>((resolve) => (release = resolve)));
    const waiting = env.client.callTool({ name: "transfer", arguments: { amount: 8 } });
    await expect.poll(() => broker.asks.some((a) => a.arguments["amount"] === 8)).toBe(true);
    answers.set(9, () => ({ kind: "approved", arguments: { amount: 9 }, consentResponse: {}, scope: "once" }));
    expect(textOf(await env.client.callTool({ name: "transfer", arguments: { amount: 9 } }))).toBe("transferred 9");
    release({ kind: "denied", reason: "late", consentResponse: { decision: "denied" } });
    expect(textOf(await waiting)).toBe("denied by a person: late");
  });

  it("a client cancelling a pending call aborts the broker's signal and is audited as withdrawn", async () => {
    answers.set(10, () => "wait");
    const controller = new AbortController();
    const call = env.client.callTool({ name: "transfer", arguments: { amount: 10 } }, undefined, {
      signal: controller.signal,
    });
    await expect.poll(() => broker.asks.some((a) => a.arguments["amount"] === 10)).toBe(true);
    controller.abort("changed my mind");
    await expect(call).rejects.toThrow();
    const ask = broker.asks.find((a) => a.arguments["amount"] === 10);
    await expect.poll(() => ask?.signal.aborted).toBe(true);
    await expect.poll(() => eventsOf(10)).toContain("consent_withdrawn");
  });

  it("a client disconnecting while a call is pending withdraws it", async () => {
    answers.set(11, () => "wait");
    const other = await connectClient(env.proxy);
    const call = other.callTool({ name: "transfer", arguments: { amount: 11 } });
    await expect.poll(() => broker.asks.some((a) => a.arguments["amount"] === 11)).toBe(true);
    await other.close();
    await expect(call).rejects.toThrow();
    await expect.poll(() => eventsOf(11)).toContain("consent_withdrawn");
  });

  it("a broker that throws denies (fail closed)", async () => {
    answers.set(12, () => {
      throw new Error("channel down");
    });
    const result = await env.client.callTool({ name: "transfer", arguments: { amount: 12 } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("the consent channel failed: channel down");
  });
});

describe("closing the proxy while a call waits for a person", () => {
  it("waits for the withdrawn request to be audited before close() resolves (the audit log closes after it)", async () => {
    const events: string[] = [];
    let auditClosed = false;
    const audit = {
      record: (type: string) => {
        if (auditClosed) throw new Error("the audit log is closed");
        events.push(type);
      },
    };
    // a broker that notices the withdrawal a little later, as a real one does after its channels answer
    const broker = scriptedBroker(
      (ask) =>
        new Promise<ConsentOutcome>((resolve) => {
          ask.signal.addEventListener("abort", () => setTimeout(() => resolve({ kind: "withdrawn" }), 300), {
            once: true,
          });
        }),
    );
    const env = await startInMemory({
      upstreams: [fixture()],
      decide: decideByTool({ transfer: "ask" }),
      broker,
      audit,
    });
    const call = env.client.callTool({ name: "transfer", arguments: { amount: 1 } }).catch(() => undefined);
    await expect.poll(() => broker.asks.length).toBe(1);
    await env.proxy.close();
    auditClosed = true;
    expect(events).toContain("consent_withdrawn");
    await env.client.close();
    await call;
  });
});

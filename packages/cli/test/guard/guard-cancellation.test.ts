import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DynamicStructuredTool } from "@langchain/core/tools";
import { z } from "zod";
import { afterAll, describe, expect, it } from "vitest";
import { callSignal } from "../../src/guard/call-signal.js";
import { isGuardRefusal, openGuard, type Guard, type GuardQuestion } from "../../src/guard/index.js";
import { fixtureHome, PASSPHRASE, tempRoot } from "../home-fixture.js";

const POLICY = `version: "1"
default_action: ask
rules:
  - { id: reads, match: { tool: lookup }, action: allow }
`;

const root = tempRoot("guard-cancellation");
afterAll(() => root.cleanup());

function home(): string {
  const made = fixtureHome(root.dir);
  writeFileSync(join(made.home, "policy.yml"), POLICY);
  return made.home;
}

const quiet = { passphrase: PASSPHRASE, log: () => undefined };

/** The audit's event types; none when nothing was audited (the log is made at the first event). */
function eventTypes(homeDir: string): string[] {
  if (!existsSync(join(homeDir, "audit.jsonl"))) return [];
  return readFileSync(join(homeDir, "audit.jsonl"), "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => (JSON.parse(l) as { event_type?: string }).event_type ?? "");
}

/**
 * An `AbortController` as a polyfill (the `abort-controller` package) or another realm makes it: an
 * event target with `aborted`, and no `instanceof AbortSignal` here.
 */
function foreignController(): { signal: EventTarget & { aborted: boolean }; abort: () => void } {
  const signal = Object.assign(new EventTarget(), { aborted: false });
  const abort = (): void => {
    if (signal.aborted) return;
    signal.aborted = true;
    signal.dispatchEvent(new Event("abort"));
  };
  return { signal, abort };
}

/** A guard whose person waits until the question is withdrawn; `asked` resolves at the next question. */
async function waitingGuard(
  homeDir: string,
): Promise<{ acp: Guard; questions: GuardQuestion[]; asked: Promise<void> }> {
  const questions: GuardQuestion[] = [];
  let onAsk = (): void => undefined;
  const asked = new Promise<void>((resolve) => (onAsk = resolve));
  const acp = await openGuard({
    home: homeDir,
    ...quiet,
    ask: (q) => {
      questions.push(q);
      onAsk();
      return new Promise((_, reject) => q.signal.addEventListener("abort", () => reject(new Error("withdrawn"))));
    },
  });
  return { acp, questions, asked };
}

describe("callSignal: the cancellation a framework hands a tool, wherever and however it comes", () => {
  it("finds `signal` in the third argument (LangChain's DynamicStructuredTool) and `abortSignal` in the second", () => {
    const third = new AbortController();
    const found = callSignal([{ input: 1 }, undefined, { signal: third.signal }]);
    expect(found.signal?.aborted).toBe(false);
    third.abort();
    expect(found.signal?.aborted).toBe(true);
  });

  it("follows both names when both are given: aborting either cancels", () => {
    const ai = new AbortController();
    const lc = new AbortController();
    const found = callSignal([{ abortSignal: ai.signal, signal: lc.signal }]);
    lc.abort(new Error("stop"));
    expect(found.signal?.aborted).toBe(true);
    expect((found.signal?.reason as Error).message).toBe("stop");
  });

  it("takes a signal of another realm for one, and stops listening to it when released", () => {
    const foreign = foreignController();
    const found = callSignal([{ abortSignal: foreign.signal }]);
    expect(found.signal).toBeInstanceOf(AbortSignal);
    found.release();
    foreign.abort();
    expect(found.signal?.aborted).toBe(false); // released: the call was over
    const again = foreignController();
    const live = callSignal([{ abortSignal: again.signal }]);
    again.abort();
    expect(live.signal?.aborted).toBe(true);
  });

  it("ignores what is no signal and a getter that throws", () => {
    const throwing = Object.defineProperty({}, "signal", {
      get() {
        throw new Error("no");
      },
    });
    expect(callSignal([throwing, { signal: "x" }, null, 3]).signal).toBeUndefined();
  });
});

describe("openGuard: cancellation", () => {
  it("does not decide, nor run, an allowed call whose signal (of another realm) was aborted before it", async () => {
    const h = home();
    const acp = await openGuard({ home: h, ...quiet });
    let ran = false;
    const lookup = acp.guard("lookup", (args: object, options: { abortSignal: unknown }) => {
      ran = options.abortSignal !== undefined;
      return args;
    });
    const foreign = foreignController();
    foreign.abort();
    const error = await lookup({}, { abortSignal: foreign.signal }).catch((e: unknown) => e);
    await acp.close();
    expect(ran).toBe(false);
    expect(isGuardRefusal(error) && error.stop).toBe("withdrawn");
    expect((error as Error).message).toContain("cancelled before it was decided");
    expect(eventTypes(h)).not.toContain("tool_call_intercepted");
  });

  it("withdraws a call waiting for a person when LangChain's DynamicStructuredTool passes the signal third", async () => {
    const h = home();
    const { acp, questions, asked } = await waitingGuard(h);
    const sent: unknown[] = [];
    const send = new DynamicStructuredTool({
      name: "send_email",
      description: "send an email",
      schema: z.object({ to: z.string() }),
      func: acp.guard("send_email", (args: { to: string }) => (sent.push(args), "sent"), { server: "mail" }),
    });
    const controller = new AbortController();
    const invoked = send.invoke({ to: "erin@example.org" }, { signal: controller.signal }).catch((e: unknown) => e);
    await asked;
    controller.abort();
    const error = await invoked; // withdrawn by the signal, not by close (which comes after)
    expect(questions[0]?.signal.aborted).toBe(true);
    await acp.close();
    expect(sent).toEqual([]);
    expect(isGuardRefusal(error) && error.stop).toBe("withdrawn");
    expect(eventTypes(h)).toContain("consent_withdrawn");
  });
});

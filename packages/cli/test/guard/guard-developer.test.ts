import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, expectTypeOf, it } from "vitest";
import { isGuardRefusal, openGuard, type Guard, type GuardOptions, type GuardQuestion } from "../../src/guard/index.js";
import { fixtureHome, PASSPHRASE, tempRoot } from "../home-fixture.js";

const POLICY = `version: "1"
default_action: ask
rules:
  - { id: reads, match: { tool: lookup }, action: allow }
`;

const root = tempRoot("guard-developer");
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

/** A guard whose person waits until the question is withdrawn; `asked` resolves at each question. */
async function waitingGuard(
  homeDir: string,
): Promise<{ acp: Guard; questions: GuardQuestion[]; asked: () => Promise<void> }> {
  const questions: GuardQuestion[] = [];
  let onAsk = (): void => undefined;
  const acp = await openGuard({
    home: homeDir,
    ...quiet,
    ask: (q) => {
      questions.push(q);
      onAsk();
      return new Promise((_, reject) => q.signal.addEventListener("abort", () => reject(new Error("withdrawn"))));
    },
  });
  const asked = (): Promise<void> => new Promise((resolve) => (onAsk = resolve));
  return { acp, questions, asked };
}

describe("openGuard as a framework developer meets it: misconfiguration fails at once", () => {
  it("rejects an option it does not know, naming the one meant", async () => {
    const options = { home: home(), ...quiet, polcy: "./policy.yml" } as GuardOptions;
    await expect(openGuard(options)).rejects.toThrow(/unknown option `polcy` \(did you mean `policy`\?\)/);
  });

  it("rejects an ask that is not a function, rather than approving nothing", async () => {
    const options = { home: home(), ...quiet, ask: "yes" } as unknown as GuardOptions;
    await expect(openGuard(options)).rejects.toThrow(/option `ask` must be a function, not string/);
  });

  it("rejects a home named in the options that does not exist, rather than auditing nothing", async () => {
    const missing = join(root.dir, "no-such-home");
    await expect(openGuard({ home: missing, ...quiet })).rejects.toThrow(/no ACP home at `.*no-such-home`/);
  });

  it("rejects a named directory acp init did not make (only the pins.json a proxy left before acp init)", async () => {
    const bare = join(root.dir, "pins-only");
    mkdirSync(bare, { mode: 0o700 });
    writeFileSync(join(bare, "pins.json"), '{ "version": 1, "servers": {} }\n', { mode: 0o600 });
    await expect(openGuard({ home: bare, ...quiet })).rejects.toThrow(/no ACP home at `.*pins-only`/);
    expect(existsSync(join(bare, "state.db"))).toBe(false);
  });

  it("throws at guard() for a tool without a name, a function that is not one, or an unknown category", async () => {
    const acp = await openGuard({ home: home(), ...quiet });
    expect(() => acp.guard("", () => 1)).toThrow(TypeError);
    expect(() => acp.guard("t", "run" as unknown as () => number)).toThrow(/the tool must be a function/);
    expect(() => acp.guard("pay", () => 1, { category: "finacial" as "financial" })).toThrow(
      /unknown category `finacial` \(did you mean `financial`\?\)/,
    );
    await acp.close();
  });
});

describe("openGuard as a framework developer meets it: signatures and cancellation", () => {
  it("keeps the tool's signature: a framework's second argument reaches the function", async () => {
    const acp = await openGuard({ home: home(), ...quiet });
    interface ExecOptions {
      readonly toolCallId: string;
      readonly abortSignal?: AbortSignal;
    }
    const lookup = acp.guard("lookup", (args: { q: string }, options: ExecOptions) => ({
      q: args.q,
      id: options.toolCallId,
    }));
    expectTypeOf(lookup).toEqualTypeOf<
      (args: { q: string }, options: ExecOptions) => Promise<{ q: string; id: string }>
    >();
    expect(await lookup({ q: "x" }, { toolCallId: "call-7" })).toEqual({ q: "x", id: "call-7" });
    await acp.close();
  });

  it("withdraws a call waiting for a person when the framework aborts it (AI SDK `abortSignal`)", async () => {
    const h = home();
    const { acp, questions, asked } = await waitingGuard(h);
    let ran = false;
    const send = acp.guard("send", (args: { to: string }, options: { abortSignal?: AbortSignal }) => {
      ran = options.abortSignal !== undefined;
      return args.to;
    });
    const controller = new AbortController();
    const waiting = asked();
    const call = send({ to: "bob@example.com" }, { abortSignal: controller.signal }).catch((e: unknown) => e);
    await waiting;
    controller.abort();
    const error = await call;
    expect(isGuardRefusal(error) && error.stop).toBe("withdrawn");
    expect(questions[0]?.signal.aborted).toBe(true);
    expect(ran).toBe(false);
    await acp.close();
    expect(eventTypes(h)).toContain("consent_withdrawn");
    expect(eventTypes(h)).not.toContain("tool_call_forwarded");
  });

  it("withdraws on LangChain's `signal`, and one aborted call leaves the others waiting", async () => {
    const h = home();
    const { acp, questions, asked } = await waitingGuard(h);
    const send = acp.guard("send", (args: { to: string }, config?: { signal?: AbortSignal }) => [args.to, config]);
    const first = new AbortController();
    let waiting = asked();
    const cancelled = send({ to: "a@example.com" }, { signal: first.signal }).catch((e: unknown) => e);
    await waiting;
    waiting = asked();
    const other = send({ to: "b@example.com" }).catch((e: unknown) => e);
    await waiting;
    first.abort();
    expect(isGuardRefusal(await cancelled) && ((await cancelled) as { stop: string }).stop).toBe("withdrawn");
    expect(questions.map((q) => q.signal.aborted)).toEqual([true, false]);
    await acp.close(); // withdraws the other one
    expect(isGuardRefusal(await other) && ((await other) as { stop: string }).stop).toBe("withdrawn");
  });

  it("does not run an allowed call whose signal was aborted before it was decided", async () => {
    const h = home();
    const acp = await openGuard({ home: h, ...quiet });
    let ran = false;
    const lookup = acp.guard("lookup", (args: object, options: { signal: AbortSignal }) => {
      ran = options.signal !== undefined;
      return args;
    });
    const error = await lookup({}, { signal: AbortSignal.abort() }).catch((e: unknown) => e);
    await acp.close();
    expect(isGuardRefusal(error) && error.stop).toBe("withdrawn");
    expect(ran).toBe(false);
    expect(eventTypes(h)).not.toContain("tool_call_intercepted"); // nothing decided
  });

  it("runs many calls at once, each decided and audited on its own", async () => {
    const h = home();
    const acp = await openGuard({ home: h, ...quiet });
    const lookup = acp.guard("lookup", async (args: { n: number }) => {
      await new Promise((resolve) => setImmediate(resolve));
      return args.n * 2;
    });
    const results = await Promise.all(Array.from({ length: 20 }, (_, n) => lookup({ n })));
    await acp.close();
    expect(results).toEqual(Array.from({ length: 20 }, (_, n) => n * 2));
    expect(eventTypes(h).filter((t) => t === "tool_call_completed")).toHaveLength(20);
  });
});

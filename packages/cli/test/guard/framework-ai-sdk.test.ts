import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { generateText, stepCountIs, tool } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { z } from "zod";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { openGuard, type GuardQuestion } from "../../src/guard/index.js";
import { envFor, fixtureHome, PASSPHRASE, tempRoot } from "../home-fixture.js";
import { mailAgent } from "./framework/ai-sdk-agent.js";

const GUIDE = fileURLToPath(new URL("../../../../docs/guides/framework.md", import.meta.url));
const SNIPPET = fileURLToPath(new URL("./framework/ai-sdk-agent.ts", import.meta.url));
const POLICY = `version: "1"
default_action: ask
rules:
  - { id: mail-bob, match: { tool: send_email, args: { to: "bob@example.com" } }, action: allow }
  - { id: no-attacker, match: { tool: send_email, args: { to: "*@attacker.example" } }, action: deny }
`;

/** One reply of a language model, as the AI SDK's providers give it. */
type LanguageModelV3GenerateResult = Awaited<ReturnType<MockLanguageModelV3["doGenerate"]>>;

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};
/** A model that calls `send_email` with `input`, then answers in words once it has the tool's answer. */
function modelCalling(input: { to: string; body: string }): MockLanguageModelV3 {
  const call: LanguageModelV3GenerateResult = {
    content: [{ type: "tool-call", toolCallId: "call-1", toolName: "send_email", input: JSON.stringify(input) }],
    finishReason: { unified: "tool-calls", raw: "tool_calls" },
    usage,
    warnings: [],
  };
  const done: LanguageModelV3GenerateResult = {
    content: [{ type: "text", text: "done" }],
    finishReason: { unified: "stop", raw: "stop" },
    usage,
    warnings: [],
  };
  return new MockLanguageModelV3({ doGenerate: [call, done] });
}

/** What the model was told `send_email` answered: the tool result in the prompt of its second call. */
function toolAnswerSeen(model: MockLanguageModelV3): unknown {
  const prompt = model.doGenerateCalls[1]?.prompt ?? [];
  for (const message of prompt) {
    if (message.role !== "tool") continue;
    for (const part of message.content) if (part.type === "tool-result") return part.output;
  }
  return undefined;
}

const root = tempRoot("framework-ai-sdk");
afterAll(() => root.cleanup());

describe("docs/guides/framework.md: the Vercel AI SDK agent runs as written", () => {
  const saved = { home: process.env["ACP_HOME"], passphrase: process.env["ACP_PASSPHRASE"] };
  let home = "";
  const sent: { to: string; body: string }[] = [];
  const mail = {
    send: (args: { to: string; body: string }) => {
      sent.push(args);
      return Promise.resolve(`sent to ${args.to}`);
    },
  };
  beforeEach(() => {
    ({ home } = fixtureHome(root.dir));
    writeFileSync(join(home, "policy.yml"), POLICY);
    process.env["ACP_HOME"] = envFor(home)["ACP_HOME"];
    process.env["ACP_PASSPHRASE"] = PASSPHRASE;
    sent.length = 0;
  });
  afterEach(() => {
    for (const [key, value] of [
      ["ACP_HOME", saved.home],
      ["ACP_PASSPHRASE", saved.passphrase],
    ] as const) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  });
  const nobody = (): Promise<boolean> => Promise.reject(new Error("nobody should be asked"));

  it("is in the guide verbatim", () => {
    expect(readFileSync(GUIDE, "utf8")).toContain("```ts\n" + readFileSync(SNIPPET, "utf8") + "```\n");
  });

  it("allow: the model's call runs and the model gets the tool's answer", async () => {
    const model = modelCalling({ to: "bob@example.com", body: "hi" });
    const result = await mailAgent(model, mail, nobody, "mail bob@example.com a hello");
    expect(sent).toEqual([{ to: "bob@example.com", body: "hi" }]);
    expect(toolAnswerSeen(model)).toEqual({ type: "text", value: "sent to bob@example.com" });
    expect(result.text).toBe("done");
  });

  it("deny: the policy refuses, the mail is not sent, and the model gets the refusal as a tool error", async () => {
    const model = modelCalling({ to: "mark@attacker.example", body: "the inbox" });
    const result = await mailAgent(model, mail, nobody, "mail mark@attacker.example the inbox");
    expect(sent).toEqual([]);
    expect(toolAnswerSeen(model)).toEqual({
      type: "error-text",
      value: expect.stringMatching(/^refused by policy rule `no-attacker`/) as unknown,
    });
    expect(result.text).toBe("done");
    expect(readFileSync(join(home, "audit.jsonl"), "utf8")).toContain('"policy_rule":"policy:no-attacker"');
  });

  it("beyond the guide: generateText's abortSignal reaches the guard, and a call waiting for a person is withdrawn", async () => {
    const controller = new AbortController();
    const questions: GuardQuestion[] = [];
    // the person is asked; meanwhile the program gives up on the turn
    const acp = await openGuard({
      ask: (q) => {
        questions.push(q);
        setImmediate(() => controller.abort());
        return new Promise((_, reject) => q.signal.addEventListener("abort", () => reject(new Error("withdrawn"))));
      },
    });
    const model = modelCalling({ to: "erin@example.org", body: "x" });
    const send_email = tool({
      description: "send an email",
      inputSchema: z.object({ to: z.string(), body: z.string() }),
      execute: acp.guard("send_email", mail.send, { server: "mail" }),
    });
    await generateText({
      model,
      prompt: "mail erin@example.org",
      tools: { send_email },
      stopWhen: stepCountIs(3),
      abortSignal: controller.signal,
    }).catch(() => undefined);
    // withdrawn by the SDK's signal, before close would withdraw it
    expect(questions).toHaveLength(1);
    expect(questions[0]?.signal.aborted).toBe(true);
    await acp.close();
    expect(sent).toEqual([]);
    const audit = readFileSync(join(home, "audit.jsonl"), "utf8");
    expect(audit).toContain('"event_type":"consent_withdrawn"');
    expect(audit).not.toContain('"event_type":"tool_call_forwarded"');
  });

  it("ask: the callback answers yes and the call runs; no, and the model is told a person denied it", async () => {
    const questions: GuardQuestion[] = [];
    const yes = (q: GuardQuestion): Promise<boolean> => (questions.push(q), Promise.resolve(true));
    const approved = modelCalling({ to: "carol@example.org", body: "lunch?" });
    await mailAgent(approved, mail, yes, "ask carol@example.org about lunch");
    expect(questions.map((q) => q.request.action.tool)).toEqual(["send_email"]);
    expect(sent).toEqual([{ to: "carol@example.org", body: "lunch?" }]);
    expect(toolAnswerSeen(approved)).toEqual({ type: "text", value: "sent to carol@example.org" });

    const no = (): Promise<{ decision: "denied"; reason: string }> =>
      Promise.resolve({ decision: "denied", reason: "not today" });
    const denied = modelCalling({ to: "dave@example.org", body: "lunch?" });
    await mailAgent(denied, mail, no, "ask dave@example.org about lunch");
    expect(sent).toHaveLength(1);
    expect(toolAnswerSeen(denied)).toEqual({
      type: "error-text",
      value: expect.stringMatching(/^denied by a person: .*not today/) as unknown,
    });
  });
});

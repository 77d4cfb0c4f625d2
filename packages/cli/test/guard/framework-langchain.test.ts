import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { z } from "zod";
import type { ChatResult } from "@langchain/core/outputs";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { openGuard, type GuardQuestion } from "../../src/guard/index.js";
import { envFor, fixtureHome, PASSPHRASE, tempRoot } from "../home-fixture.js";
import { mailAgent } from "./framework/langchain-agent.js";

const GUIDE = fileURLToPath(new URL("../../../../docs/guides/framework.md", import.meta.url));
const SNIPPET = fileURLToPath(new URL("./framework/langchain-agent.ts", import.meta.url));
const POLICY = `version: "1"
default_action: ask
rules:
  - { id: mail-bob, match: { tool: send_email, args: { to: "bob@example.com" } }, action: allow }
  - { id: no-attacker, match: { tool: send_email, args: { to: "*@attacker.example" } }, action: deny }
`;

/**
 * A LangChain chat model that replies from a script: first a call of `send_email`, then words. (The fake
 * models of `@langchain/core/utils/testing` answer every turn alike: FakeStreamingChatModel repeats its
 * one tool call, FakeListChatModel has text only.) It keeps what it was sent each turn.
 */
class ScriptedChatModel extends BaseChatModel {
  readonly seen: BaseMessage[][] = [];
  private readonly replies: AIMessage[];

  constructor(input: { to: string; body: string }) {
    super({});
    this.replies = [
      new AIMessage({
        content: "",
        tool_calls: [{ id: "call-1", name: "send_email", args: input, type: "tool_call" }],
      }),
      new AIMessage("done"),
    ];
  }

  _llmType(): string {
    return "scripted";
  }

  override bindTools(): this {
    return this;
  }

  _generate(messages: BaseMessage[]): Promise<ChatResult> {
    this.seen.push([...messages]);
    const message = this.replies.shift() ?? new AIMessage("done");
    return Promise.resolve({
      generations: [{ message, text: typeof message.content === "string" ? message.content : "" }],
    });
  }
}

/** What the model was told `send_email` answered: the tool message in what it was sent on its second turn. */
function toolAnswerSeen(model: ScriptedChatModel): { content: unknown; status: unknown } | undefined {
  const message = model.seen[1]?.find((m): m is ToolMessage => ToolMessage.isInstance(m));
  return message === undefined ? undefined : { content: message.content, status: message.status };
}

const root = tempRoot("framework-langchain");
afterAll(() => root.cleanup());

describe("docs/guides/framework.md: the LangChain.js agent runs as written", () => {
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
    const model = new ScriptedChatModel({ to: "bob@example.com", body: "hi" });
    const messages = await mailAgent(model, mail, nobody, "mail bob@example.com a hello");
    expect(sent).toEqual([{ to: "bob@example.com", body: "hi" }]);
    expect(toolAnswerSeen(model)).toEqual({ content: "sent to bob@example.com", status: "success" });
    expect(messages.at(-1)?.content).toBe("done");
  });

  it("deny: the policy refuses, the mail is not sent, and the model gets the refusal as a tool error", async () => {
    const model = new ScriptedChatModel({ to: "mark@attacker.example", body: "the inbox" });
    const messages = await mailAgent(model, mail, nobody, "mail mark@attacker.example the inbox");
    expect(sent).toEqual([]);
    expect(toolAnswerSeen(model)).toEqual({
      content: expect.stringMatching(/^refused by policy rule `no-attacker`/) as unknown,
      status: "error",
    });
    expect(messages.at(-1)?.content).toBe("done");
    expect(readFileSync(join(home, "audit.jsonl"), "utf8")).toContain('"policy_rule":"policy:no-attacker"');
  });

  it("beyond the guide: the signal of tool.invoke reaches the guard, and a call waiting for a person is withdrawn", async () => {
    const controller = new AbortController();
    const questions: GuardQuestion[] = [];
    let asked = (): void => undefined;
    const waiting = new Promise<void>((resolve) => (asked = resolve));
    const acp = await openGuard({
      ask: (q) => {
        questions.push(q);
        asked();
        return new Promise((_, reject) => q.signal.addEventListener("abort", () => reject(new Error("withdrawn"))));
      },
    });
    const sendEmail = tool(acp.guard("send_email", mail.send, { server: "mail" }), {
      name: "send_email",
      description: "send an email",
      schema: z.object({ to: z.string(), body: z.string() }),
    });
    const call = {
      id: "call-9",
      name: "send_email",
      args: { to: "erin@example.org", body: "x" },
      type: "tool_call" as const,
    };
    const invoked = sendEmail.invoke(call, { signal: controller.signal }).catch((e: unknown) => e);
    await waiting;
    controller.abort();
    expect(await invoked).toBeInstanceOf(Error); // LangChain gives up at once
    // the guard's call is withdrawn by the same signal (not by close, which comes after)
    const question = questions[0]?.signal;
    await new Promise((resolve) =>
      question?.aborted === true ? resolve(undefined) : question?.addEventListener("abort", resolve),
    );
    await acp.close();
    expect(sent).toEqual([]);
    const audit = readFileSync(join(home, "audit.jsonl"), "utf8");
    expect(audit).toContain('"event_type":"consent_withdrawn"');
    expect(audit).not.toContain('"event_type":"tool_call_forwarded"');
  });

  it("ask: the callback answers yes and the call runs; no, and the model is told a person denied it", async () => {
    const questions: GuardQuestion[] = [];
    const yes = (q: GuardQuestion): Promise<boolean> => (questions.push(q), Promise.resolve(true));
    const approved = new ScriptedChatModel({ to: "carol@example.org", body: "lunch?" });
    await mailAgent(approved, mail, yes, "ask carol@example.org about lunch");
    expect(questions.map((q) => q.request.action.tool)).toEqual(["send_email"]);
    expect(sent).toEqual([{ to: "carol@example.org", body: "lunch?" }]);
    expect(toolAnswerSeen(approved)).toEqual({ content: "sent to carol@example.org", status: "success" });

    const no = (): Promise<{ decision: "denied"; reason: string }> =>
      Promise.resolve({ decision: "denied", reason: "not today" });
    const denied = new ScriptedChatModel({ to: "dave@example.org", body: "lunch?" });
    await mailAgent(denied, mail, no, "ask dave@example.org about lunch");
    expect(sent).toHaveLength(1);
    expect(toolAnswerSeen(denied)).toEqual({
      content: expect.stringMatching(/^denied by a person: .*not today/) as unknown,
      status: "error",
    });
  });
});

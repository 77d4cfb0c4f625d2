/* eslint-disable @typescript-eslint/require-await -- the streaming tools here are async generators that await nothing */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { simulateReadableStream } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { envFor, fixtureHome, PASSPHRASE, tempRoot } from "../home-fixture.js";
import { runCli } from "../run.js";
import { searchAgent, type Crm } from "./framework/ai-sdk-stream-agent.js";

const GUIDE = fileURLToPath(new URL("../../../../docs/guides/framework.md", import.meta.url));
const SNIPPET = fileURLToPath(new URL("./framework/ai-sdk-stream-agent.ts", import.meta.url));
const API_KEY = "crm_key_7Hq2mZp9";

type StreamResult = Awaited<ReturnType<MockLanguageModelV3["doStream"]>>;
type StreamPart = StreamResult["stream"] extends ReadableStream<infer P> ? P : never;

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};
const streamOf = (chunks: StreamPart[]): StreamResult => ({ stream: simulateReadableStream({ chunks }) });

/** A streaming model that calls `search_contacts` for `query`, then answers "done" once it has the result. */
function modelSearching(query: string): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    doStream: [
      streamOf([
        { type: "stream-start", warnings: [] },
        { type: "tool-call", toolCallId: "call-1", toolName: "search_contacts", input: JSON.stringify({ query }) },
        { type: "finish", finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage },
      ]),
      streamOf([
        { type: "stream-start", warnings: [] },
        { type: "text-start", id: "t" },
        { type: "text-delta", id: "t", delta: "done" },
        { type: "text-end", id: "t" },
        { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage },
      ]),
    ],
  });
}

/** What the model was told `search_contacts` answered: the tool result in the prompt of its second call. */
function toolAnswerSeen(model: MockLanguageModelV3): unknown {
  for (const message of model.doStreamCalls[1]?.prompt ?? []) {
    if (message.role !== "tool") continue;
    for (const part of message.content) if (part.type === "tool-result") return part.output;
  }
  return undefined;
}

/** A CRM whose debug line echoes the API key it was called with, split over two lines of the stream. */
const crm: Crm = {
  async *search(args) {
    const key = args.apiKey ?? "";
    yield `match: Ada Lovelace (${args.query})\n`;
    yield `debug: key=${key.slice(0, 7)}`;
    yield `${key.slice(7)}\n`;
    yield "match: Ada Byron\n";
  },
};

const root = tempRoot("framework-ai-sdk-stream");
afterAll(() => root.cleanup());

describe("docs/guides/framework.md: the Vercel AI SDK streaming tool runs as written", () => {
  const saved = { home: process.env["ACP_HOME"], passphrase: process.env["ACP_PASSPHRASE"] };
  let home = "";
  beforeEach(async () => {
    ({ home } = fixtureHome(root.dir));
    writeFileSync(join(home, "policy.yml"), 'version: "1"\ndefault_action: allow\nrules: []\n');
    const env = envFor(home);
    expect((await runCli(["vault", "set", "CRM_KEY"], { env, stdin: `${API_KEY}\n` })).code).toBe(0);
    writeFileSync(
      join(home, "config.yml"),
      'version: "1"\ncredentials:\n  - { secret: CRM_KEY, server: crm, tool: search_contacts, inject: { argument: apiKey } }\n',
    );
    process.env["ACP_HOME"] = env["ACP_HOME"];
    process.env["ACP_PASSPHRASE"] = PASSPHRASE;
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

  it("is in the guide verbatim", () => {
    expect(readFileSync(GUIDE, "utf8")).toContain("```ts\n" + readFileSync(SNIPPET, "utf8") + "```\n");
  });

  it("shows each preliminary result and gives the model the output, the API key hidden in all, even split", async () => {
    const model = modelSearching("ada");
    const shown: unknown[] = [];
    const text = await searchAgent(model, crm, "find ada", (progress) => shown.push(progress));
    expect(text).toBe("done");
    const debug = "debug: key=[REDACTED]\n";
    expect(shown).toEqual([
      "match: Ada Lovelace (ada)\n",
      "match: Ada Lovelace (ada)\ndebug: key=[REDACTED]",
      `match: Ada Lovelace (ada)\n${debug}`,
      `match: Ada Lovelace (ada)\n${debug}match: Ada Byron\n`,
    ]);
    expect(toolAnswerSeen(model)).toEqual({
      type: "text",
      value: `match: Ada Lovelace (ada)\n${debug}match: Ada Byron\n`,
    });
    for (let at = 0; at + 5 <= API_KEY.length; at++) {
      expect(JSON.stringify([shown, model.doStreamCalls])).not.toContain(API_KEY.slice(at, at + 5));
    }
    const audit = readFileSync(join(home, "audit.jsonl"), "utf8");
    expect(audit).not.toContain(API_KEY);
    expect(audit).toMatch(/"event_type":"tool_call_completed"[^\n]*"streamed_chunks":4/);
  });
});

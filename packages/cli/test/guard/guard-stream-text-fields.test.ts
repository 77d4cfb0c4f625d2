/* eslint-disable @typescript-eslint/require-await -- the streaming tools here are async generators that await nothing */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ReadableStream } from "node:stream/web";
import { afterAll, describe, expect, it } from "vitest";
import { openGuard, type Guard } from "../../src/guard/index.js";
import { envFor, fixtureHome, PASSPHRASE, tempRoot } from "../home-fixture.js";
import { runCli } from "../run.js";

// `assistant` ends in `t`, which could begin the secret: a first chunk's role holds a stream back by default
const SECRET = "tok_live_fields_8830";
const root = tempRoot("guard-stream-text-fields");
afterAll(() => root.cleanup());

/** A home whose `llm.*` tools get `LLM_KEY` from the vault as their `token` argument, and a guard over it. */
async function guarded(): Promise<{ home: string; acp: Guard }> {
  const { home } = fixtureHome(root.dir);
  writeFileSync(join(home, "policy.yml"), 'version: "1"\ndefault_action: allow\nrules: []\n');
  expect((await runCli(["vault", "set", "LLM_KEY"], { env: envFor(home), stdin: `${SECRET}\n` })).code).toBe(0);
  writeFileSync(
    join(home, "config.yml"),
    'version: "1"\ncredentials:\n  - { secret: LLM_KEY, server: llm, tool: "*", inject: { argument: token } }\n',
  );
  return { home, acp: await openGuard({ home, passphrase: PASSPHRASE, log: () => undefined }) };
}

interface Args {
  readonly token?: string;
}

interface Chunk {
  readonly id: string;
  readonly choices: { index: number; delta: { role?: string; content?: string }; finish_reason?: string }[];
}

/** OpenAI-style chat chunks: the role first, then the text with the token split between two deltas. */
function chatChunks(token: string): Chunk[] {
  const chunk = (delta: Chunk["choices"][0]["delta"], end?: string): Chunk => ({
    id: "chatcmpl-1",
    choices: [{ index: 0, delta, ...(end !== undefined ? { finish_reason: end } : {}) }],
  });
  return [
    chunk({ role: "assistant", content: "" }),
    chunk({ content: `your key is ${token.slice(0, 6)}` }),
    chunk({ content: `${token.slice(6)}, keep it safe` }),
    chunk({}, "stop"),
  ];
}

/**
 * A producer that sends the first chunk, then waits until the test lets it go on: `reached` resolves
 * ("stalled") when the guard asks for the second chunk, so a guard that holds the first back is seen
 * waiting for the second rather than passing the first on.
 */
function gated(): { reached: Promise<"stalled">; arrive: () => void; open: () => void; gate: Promise<void> } {
  let arrive = (): void => undefined;
  let open = (): void => undefined;
  const reached = new Promise<"stalled">((resolve) => (arrive = () => resolve("stalled")));
  const gate = new Promise<void>((resolve) => (open = resolve));
  return { reached, arrive, open, gate };
}

async function drain<C>(stream: AsyncIterator<C>): Promise<C[]> {
  const chunks: C[] = [];
  for (let step = await stream.next(); step.done !== true; step = await stream.next()) chunks.push(step.value);
  return chunks;
}

function contentOf(chunks: readonly Chunk[]): string {
  return chunks.map((c) => c.choices[0]?.delta.content ?? "").join("");
}

describe("openGuard: guardStream's textFields keep a stream streaming", () => {
  it("passes a ReadableStream's first chunk on before the tool sends the rest, and hides a key split between deltas", async () => {
    const { home, acp } = await guarded();
    const producer = gated();
    const chat = acp.guardStream(
      "chat",
      (args: Args) => {
        const chunks = chatChunks(args.token ?? "");
        let sent = 0;
        // pulled one read at a time (no chunk is asked for before the guard reads)
        return new ReadableStream<Chunk>(
          {
            async pull(controller) {
              if (sent === 1) {
                producer.arrive();
                await producer.gate;
              }
              const next = chunks[sent++];
              if (next === undefined) controller.close();
              else controller.enqueue(next);
            },
          },
          { highWaterMark: 0 },
        );
      },
      { server: "llm", textFields: ["delta.content"] },
    );
    const stream = chat({});
    const first = await Promise.race([stream.next(), producer.reached]);
    producer.open();
    expect(first).toEqual({ done: false, value: chatChunks(SECRET)[0] });
    const rest = await drain(stream);
    await acp.close();
    expect(contentOf(rest)).toBe("your key is [REDACTED], keep it safe");
    expect(rest).toHaveLength(3); // each chunk whole, its shape kept
    expect(rest[1]?.choices[0]?.delta).toEqual({ content: ", keep it safe" });
    expect(JSON.stringify(rest)).not.toContain(SECRET.slice(0, 6));
    expect(readFileSync(join(home, "audit.jsonl"), "utf8")).not.toContain(SECRET);
  });

  it("without textFields, an async generator's first chunk waits for the next (the default joins every field)", async () => {
    const { acp } = await guarded();
    const run = (textFields?: string[]) => {
      const producer = gated();
      const chat = acp.guardStream(
        "chat",
        async function* (args: Args) {
          const [head, ...rest] = chatChunks(args.token ?? "");
          yield head as Chunk;
          producer.arrive();
          await producer.gate;
          yield* rest;
        },
        { server: "llm", ...(textFields !== undefined ? { textFields } : {}) },
      );
      return { producer, stream: chat({}) };
    };
    const joined = run();
    const held = joined.stream.next();
    expect(await Promise.race([held, joined.producer.reached])).toBe("stalled");
    joined.producer.open();
    // the held chunk comes once the next shows it began no secret
    expect(await held).toEqual({ done: false, value: chatChunks(SECRET)[0] });
    expect(contentOf(await drain(joined.stream))).toBe("your key is [REDACTED], keep it safe");

    const fields = run(["delta.content"]);
    const first = await Promise.race([fields.stream.next(), fields.producer.reached]);
    fields.producer.open();
    expect(first).toEqual({ done: false, value: chatChunks(SECRET)[0] });
    expect(contentOf(await drain(fields.stream))).toBe("your key is [REDACTED], keep it safe");
    await acp.close();
  });

  it("still replaces a whole secret at a field that is no text, and checks an array there joined within its chunk", async () => {
    const { acp } = await guarded();
    const chat = acp.guardStream(
      "chat",
      async function* (args: Args) {
        const token = args.token ?? "";
        yield { delta: { content: "hi" }, meta: { note: `key=${token}`, parts: [token.slice(0, 4), token.slice(4)] } };
      },
      { server: "llm", textFields: ["delta.content"] },
    );
    const chunks = await drain(chat({}));
    await acp.close();
    expect(chunks).toEqual([{ delta: { content: "hi" }, meta: { note: "key=[REDACTED]", parts: ["[REDACTED]", ""] } }]);
  });

  it("rejects textFields that are not field names, and textFields on guard()", async () => {
    const { acp } = await guarded();
    const gen = async function* (): AsyncGenerator<string> {
      yield "x";
    };
    expect(() => acp.guardStream("s", gen, { textFields: "delta.content" as unknown as string[] })).toThrow(
      /option `textFields` must be an array of field names, not string/,
    );
    expect(() => acp.guardStream("s", gen, { textFields: ["delta..content"] })).toThrow(
      /option `textFields` holds `delta\.\.content`: each is a field's key names joined by dots/,
    );
    expect(() => acp.guard("s", () => "x", { textFields: ["content"] })).toThrow(
      /option `textFields` is for a streaming tool: wrap it with `guardStream`/,
    );
    await acp.close();
  });
});

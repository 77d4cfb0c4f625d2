import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { isGuardRefusal, openGuard } from "../../src/index.js";
import { envFor, fixtureHome, PASSPHRASE, tempRoot } from "../home-fixture.js";

const GUIDE = fileURLToPath(new URL("../../../../docs/guides/framework.md", import.meta.url));

/** The first ```ts block after `## Quick start`, without its import line (the test hands the names in). */
function quickStart(): string {
  const text = readFileSync(GUIDE, "utf8");
  const section = text.slice(text.indexOf("## Quick start"));
  const block = /```ts\n([\s\S]*?)```/.exec(section)?.[1] ?? "";
  return block.replace(/^import .*\n/m, "");
}

type QuickStart = (...args: unknown[]) => Promise<unknown>;
/** The constructor of async functions: the snippet has top-level `await`. */
const AsyncFunction = (
  Object.getPrototypeOf(async function () {
    await Promise.resolve();
  }) as { constructor: new (...args: string[]) => QuickStart }
).constructor;

describe("docs/guides/framework.md: the quick start runs as written", () => {
  const root = tempRoot("framework-guide");
  afterAll(() => root.cleanup());

  it("guards the send, asks the person (who says no) and hands the reason back", async () => {
    const { home } = fixtureHome(root.dir);
    writeFileSync(join(home, "policy.yml"), 'version: "1"\ndefault_action: ask\nrules: []\n');
    const env = envFor(home);
    const sent: unknown[] = [];
    const questions: string[] = [];
    const mail = { send: (args: unknown) => sent.push(args), read: () => "no mail" };
    const confirm = (text: string): boolean => (questions.push(text), false);
    const body = `let toolAnswer;\n${quickStart()}\nreturn toolAnswer;`;
    const run = new AsyncFunction("openGuard", "isGuardRefusal", "mail", "confirm", "userMessage", body);
    const saved = { home: process.env["ACP_HOME"], passphrase: process.env["ACP_PASSPHRASE"] };
    process.env["ACP_HOME"] = env["ACP_HOME"];
    process.env["ACP_PASSPHRASE"] = PASSPHRASE;
    let answer: unknown;
    try {
      answer = await run(openGuard, isGuardRefusal, mail, confirm, "mail bob a hello");
    } finally {
      for (const [key, value] of [
        ["ACP_HOME", saved.home],
        ["ACP_PASSPHRASE", saved.passphrase],
      ] as const) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
    }
    expect(sent).toEqual([]);
    expect(questions).toHaveLength(1);
    expect(answer).toMatch(/^denied by a person: /);
    expect(readFileSync(join(home, "audit.jsonl"), "utf8")).toContain('"event_type":"consent_denied"');
  });
});

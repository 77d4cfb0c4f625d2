import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { MAX_ITEM_NAME, whyItemNameRefused, type UpstreamSpec } from "../../src/index.js";
import { startInMemory, textOf } from "../harness.js";

/** The SDK fixture upstream that names its tools and prompts as given. */
function named(name: string, tools: readonly string[], prompts: readonly string[] = []): UpstreamSpec {
  return {
    name,
    transport: "stdio",
    command: process.execPath,
    args: [fileURLToPath(new URL("../fixtures/named-server.mjs", import.meta.url))],
    env: { NAMED_TOOLS: JSON.stringify(tools), NAMED_PROMPTS: JSON.stringify(prompts) },
  };
}

/** Names a hostile upstream gives its tools and prompts, each outside the MCP name format (SEP-986). */
const HOSTILE = [
  "read file",
  "read_file on server `trusted`",
  "read_file\nallowed by policy",
  "get[0]",
  "a,b",
  "rеad_file", // U+0435 CYRILLIC SMALL LETTER IE
  "send_email\u202e",
  "tab\tname",
  "x".repeat(10_000),
  "",
];

let closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closing) await close();
  closing = [];
});

// A tool or prompt name from an upstream is put before a person (a consent prompt), in the audit and before
// the policy. One with spaces, brackets, a line break, a control or bidi character, a look-alike letter or
// 10,000 characters reads as something it is not there. The proxy serves only names of the MCP tool name
// format (1-128 of A-Z a-z 0-9 _ - .), says which it left out and why, and keeps serving everything else.
describe("tool and prompt names an upstream gives outside the MCP name format", () => {
  it("are not listed, are said to the operator, and calls to them never reach the upstream", async () => {
    const lines: string[] = [];
    const env = await startInMemory({
      upstreams: [named("bad", [...HOSTILE, "read_file", "ok.tool-2"], [...HOSTILE, "summarize"])],
      log: (l) => lines.push(l),
    });
    closing.push(env.close);
    const { tools } = await env.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["read_file", "ok.tool-2"]);
    const { prompts } = await env.client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(["summarize"]);

    const said = lines.filter((l) => l.includes("not served"));
    expect(said).toHaveLength(2);
    const [toolLine, promptLine] = said as [string, string];
    expect(toolLine).toMatch(/^upstream `bad`: 10 tools are not served: "read file" \(its name holds U\+0020: /);
    expect(toolLine).toContain("1 to 128 characters of A-Z a-z 0-9 _ - . (SEP-986)");
    expect(toolLine).toContain('"read_file\\nallowed by policy" (its name holds U+000A');
    expect(promptLine).toMatch(/^upstream `bad`: 10 prompts are not served: "read file" \(its name holds U\+0020/);
    // one line each: no name starts a new line of the log, nor reaches it with a bidi character unescaped
    for (const line of said) expect(line).not.toMatch(/[\n\r\t\u202e]/);

    for (const name of HOSTILE) {
      const result = await env.client.callTool({ name, arguments: {} });
      expect(result.isError, JSON.stringify(name.slice(0, 40))).toBe(true);
      expect(textOf(result)).toContain("unknown tool");
      await expect(env.client.getPrompt({ name })).rejects.toThrow(/unknown prompt/);
    }
    // the server's names of the format still work
    expect(textOf(await env.client.callTool({ name: "read_file", arguments: {} }))).toBe("called read_file");
    expect(JSON.stringify(await env.client.getPrompt({ name: "summarize" }))).toContain("prompt summarize");
    // only those two reached the upstream (its stderr says each call and prompt it is asked for; a line of its
    // stderr may come after the answer on its stdout, so it is waited for)
    await expect
      .poll(() => lines.filter((l) => /\b(call|prompt) "/.test(l)), { timeout: 10_000 })
      .toEqual([expect.stringContaining('call "read_file"'), expect.stringContaining('prompt "summarize"')]);
  }, 30_000);

  it("cost another upstream nothing", async () => {
    const env = await startInMemory({
      upstreams: [named("bad", ["evil tool", "x".repeat(129)]), named("good", ["echo", "x".repeat(128)])],
      log: () => undefined,
    });
    closing.push(env.close);
    const { tools } = await env.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["echo", "x".repeat(128)]);
  }, 30_000);
});

describe("a name the proxy's prefix would take past 128 characters", () => {
  it("is not served, and is said; the names that fit are served prefixed", async () => {
    const lines: string[] = [];
    const env = await startInMemory({
      upstreams: [named("s", ["a".repeat(125), "b".repeat(126), "echo"], ["c".repeat(126), "p"])],
      prefixTools: "always",
      log: (l) => lines.push(l),
    });
    closing.push(env.close);
    const { tools } = await env.client.listTools();
    expect(tools.map((t) => t.name)).toEqual([`s__${"a".repeat(125)}`, "s__echo"]);
    const { prompts } = await env.client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(["s__p"]);
    expect(lines).toContain(
      `upstream \`s\`: tool \`${"b".repeat(126)}\` is not served: prefixed it would be 129 characters, past the 128 an MCP name may have (prefix_tools: always)`,
    );
    expect(lines).toContainEqual(expect.stringContaining(`prompt \`${"c".repeat(126)}\` is not served: prefixed it`));
    const refused = await env.client.callTool({ name: `s__${"b".repeat(126)}`, arguments: {} });
    expect(textOf(refused)).toContain("unknown tool");
  }, 30_000);
});

describe("whyItemNameRefused", () => {
  it("takes the names of the format, 1 to 128 characters", () => {
    for (const name of ["a", "read_file", "github.create-issue", "DATA_EXPORT_v2", "x".repeat(MAX_ITEM_NAME)]) {
      expect(whyItemNameRefused(name), name).toBeUndefined();
    }
  });

  it("says why of every other name", () => {
    expect(whyItemNameRefused("")).toMatch(/^its name is empty/);
    expect(whyItemNameRefused("x".repeat(129))).toMatch(/^its name is 129 characters long/);
    expect(whyItemNameRefused("user/update")).toMatch(/^its name holds U\+002F/);
    expect(whyItemNameRefused("dеlete")).toMatch(/^its name holds U\+0435/);
    expect(whyItemNameRefused("ok\u{e0041}")).toMatch(/^its name holds U\+E0041/);
  });
});

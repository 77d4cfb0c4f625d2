/**
 * `acp proxy` started by an MCP client before `acp init`: no home, no terminal. A call that asks says what the
 * person must do: there is no `acp pending` to answer from. The directory it makes for `pins.json` is not
 * taken for a home at the next start (no state.db, no audit log signed with a key thrown away), the pins
 * still hold across starts, and `acp init` then makes the home there, keeping them.
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ACP, EVERYTHING } from "./proxy-client-fixture.js";
import { tempRoot } from "./home-fixture.js";
import { runCli } from "./run.js";

const root = tempRoot("proxy-no-home");
afterAll(root.cleanup);

describe("acp proxy with no ACP home, started by an MCP client", () => {
  it("refuses a call that asks saying to run acp init, in the tool error and on stderr", async () => {
    const home = join(root.dir, "not-made", ".acp");
    const policy = join(root.dir, "policy.yml");
    writeFileSync(
      policy,
      'version: "1"\ndefault_action: allow\nrules:\n  - { id: echo-asks, match: { tool: echo }, action: ask }\n',
    );
    const stderr: string[] = [];
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [ACP, "proxy", "--upstream", EVERYTHING, "--name", "everything", "--policy", policy],
      env: { PATH: process.env["PATH"] ?? "", HOME: root.dir, ACP_HOME: home },
      stderr: "pipe",
    });
    transport.stderr?.on("data", (chunk: Buffer) => void stderr.push(chunk.toString("utf8")));
    const client = new Client({ name: "no-home-agent", version: "1.0.0" });
    await client.connect(transport);
    try {
      const tools = await client.listTools();
      expect(tools.tools.map((t) => t.name)).toContain("echo");
      const result = await client.callTool({ name: "echo", arguments: { message: "hi" } });
      expect(result.isError).toBe(true);
      const text = (result.content as { type: string; text: string }[])[0]?.text ?? "";
      expect(text).toBe(
        `consent not given: no consent channel is available: no terminal to ask at, and no ACP home at \`${home}\` for \`acp pending\` and \`acp approve\` to answer from (run \`acp init\`, then start acp again)`,
      );
      // the client's log says it too, naming the call
      expect(stderr.join("")).toContain(
        "acp proxy: `echo` on `everything` was refused: no consent channel is available",
      );
    } finally {
      await client.close();
    }
  }, 60_000);

  it("takes the directory a first start made for pins.json for no home at the next, keeps the pins, and acp init makes the home there", async () => {
    const home = join(root.dir, "two-starts", ".acp");
    const policy = join(root.dir, "allow.yml");
    writeFileSync(policy, 'version: "1"\ndefault_action: allow\nrules: []\n');
    const env = { HOME: join(root.dir, "two-starts"), ACP_HOME: home };
    const memoryLine = `acp proxy: no ACP home at ${home}: nothing is audited and state is kept in memory (run \`acp init\`)`;

    const first = await start(env, policy);
    expect(first.stderr()).toContain(memoryLine);
    expect(existsSync(join(home, "pins.json"))).toBe(true);
    expect(existsSync(join(home, "state.db"))).toBe(false);
    expect(existsSync(join(home, "audit.jsonl"))).toBe(false);

    // the pin of `echo` as if the server had described it otherwise at the first start: the next start must
    // read it and hold the tool, serving the pinned text (rug-pull detection before acp init)
    const pinned = "Echoes back the input string, as first seen";
    const pins = JSON.parse(readFileSync(join(home, "pins.json"), "utf8")) as {
      servers: Record<
        string,
        Record<
          string,
          { description: string; field_hashes: Record<string, string>; definition: { description: string } }
        >
      >;
    };
    const echo = pins.servers["everything"]?.["echo"];
    if (echo === undefined) throw new Error("echo was not pinned at the first start");
    echo.description = pinned;
    echo.definition.description = pinned;
    echo.field_hashes["description"] = `sha256:${createHash("sha256").update(JSON.stringify(pinned)).digest("hex")}`;
    writeFileSync(join(home, "pins.json"), `${JSON.stringify(pins, null, 2)}\n`, { mode: 0o600 });

    const second = await start(env, policy);
    expect(second.stderr()).toContain(memoryLine);
    expect(second.echoDescription).toBe(pinned);
    expect(second.sum).toBe(true);
    expect(existsSync(join(home, "state.db"))).toBe(false);
    expect(existsSync(join(home, "audit.jsonl"))).toBe(false);
    const pinsBeforeInit = readFileSync(join(home, "pins.json"), "utf8");

    const init = await runCli(["init", "--no-passphrase"], { env });
    expect(init.stderr).not.toContain("already holds");
    expect(init.code).toBe(0);
    expect(readFileSync(join(home, "pins.json"), "utf8")).toBe(pinsBeforeInit);

    // now a home: audited, state in state.db, and the pins still hold
    const third = await start(env, policy);
    expect(third.stderr()).not.toContain("no ACP home");
    expect(third.echoDescription).toBe(pinned);
    expect(third.sum).toBe(true);
    expect(existsSync(join(home, "state.db"))).toBe(true);
    expect(readFileSync(join(home, "audit.jsonl"), "utf8")).toContain('"event_type":"tool_call_completed"');
    // every line of it under the home's key: nothing from before acp init that nobody can check
    const verified = await runCli(["audit", "verify"], { env });
    expect(verified.stderr).toBe("");
    expect(verified.code).toBe(0);
  }, 90_000);
});

/** One start of a real `acp proxy` by an SDK client: lists the tools, adds two numbers, stops. */
async function start(
  env: Record<string, string>,
  policy: string,
): Promise<{ stderr: () => string; echoDescription: string | undefined; sum: boolean }> {
  const stderr: string[] = [];
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [ACP, "proxy", "--upstream", EVERYTHING, "--name", "everything", "--policy", policy],
    env: { PATH: process.env["PATH"] ?? "", ...env },
    stderr: "pipe",
  });
  transport.stderr?.on("data", (chunk: Buffer) => void stderr.push(chunk.toString("utf8")));
  const client = new Client({ name: "no-home-agent", version: "1.0.0" });
  await client.connect(transport);
  try {
    const tools = await client.listTools();
    const result = await client.callTool({ name: "get-sum", arguments: { a: 2, b: 3 } });
    const text = (result.content as { type: string; text?: string }[])[0]?.text ?? "";
    return {
      stderr: () => stderr.join(""),
      echoDescription: tools.tools.find((t) => t.name === "echo")?.description,
      sum: result.isError !== true && text.includes("5"),
    };
  } finally {
    await client.close();
  }
}

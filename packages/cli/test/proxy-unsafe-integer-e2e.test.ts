import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { ACP, ROOT } from "./proxy-client-fixture.js";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";
import { runCli } from "./run.js";

/**
 * An agent not written in JavaScript sends `{"id": 1234567890123456789}` (a snowflake id). `acp proxy` read
 * it as 1234567890123456768, decided on that number, and forwarded `1234567890123456800` to the upstream:
 * another object deleted than the one the agent named, behind its back. Now the call is refused before it
 * is decided (`unsafe_integer`, naming the argument), and recorded as every refused call is; the upstream
 * never hears of it. The same id sent as a string goes through exactly.
 */
const FIXTURE = join(ROOT, "packages/proxy/test/fixtures/raw-arguments-server.mjs");
const SNOWFLAKE = "1234567890123456789";

/**
 * An MCP transport over the proxy's stdio that writes a string `"@exact:DIGITS"` as the bare number DIGITS,
 * as a Python or Go agent writes an integer it holds exactly: JavaScript's own JSON cannot write one.
 */
class ExactIntegerTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  readonly #buffer = new ReadBuffer();
  #child: ChildProcess | undefined;

  constructor(
    private readonly args: string[],
    private readonly env: Record<string, string>,
  ) {}

  start(): Promise<void> {
    const child = spawn(process.execPath, [ACP, ...this.args], {
      env: { PATH: process.env["PATH"] ?? "", ...this.env },
      stdio: ["pipe", "pipe", "ignore"],
    });
    this.#child = child;
    child.stdout?.on("data", (chunk: Buffer) => {
      this.#buffer.append(chunk);
      for (let m = this.#buffer.readMessage(); m !== null; m = this.#buffer.readMessage()) this.onmessage?.(m);
    });
    child.on("close", () => this.onclose?.());
    return Promise.resolve();
  }

  send(message: JSONRPCMessage): Promise<void> {
    this.#child?.stdin?.write(serializeMessage(message).replace(/"@exact:(-?\d+)"/g, "$1"));
    return Promise.resolve();
  }

  close(): Promise<void> {
    const child = this.#child;
    if (child === undefined || child.exitCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      child.once("close", () => resolve());
      child.stdin?.end();
    });
  }
}

function textOf(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content.map((c) => c.text ?? "").join("");
}

describe("acp proxy: an integer JavaScript cannot carry exactly (built CLI, a raw upstream)", () => {
  const root = tempRoot("proxy-unsafe-integer");
  const received = join(root.dir, "received.jsonl");
  let env: Record<string, string> = {};
  let client: Client;

  beforeAll(async () => {
    if (!existsSync(join(ROOT, "packages/cli/dist/wiring/audit-sink.js"))) {
      throw new Error("build the CLI first: npx tsc -b packages/cli");
    }
    const { home } = fixtureHome(root.dir);
    env = envFor(home);
    writeFileSync(
      join(home, "policy.yml"),
      'version: "1"\ndefault_action: deny\nrules:\n  - id: delete\n    match: { tool: delete_object }\n    action: allow\n',
    );
    writeFileSync(received, "");
    client = new Client({ name: "python-like-agent", version: "1.0.0" });
    await client.connect(
      new ExactIntegerTransport(
        ["proxy", "--upstream", `${process.execPath} ${FIXTURE} ${received}`, "-n", "raw"],
        env,
      ),
    );
  }, 120_000);
  afterAll(async () => {
    await client?.close();
    root.cleanup();
  });

  it("refuses the call, names the argument, never forwards a rounded id; the id as a string goes through exactly", async () => {
    const big = await client.callTool({ name: "delete_object", arguments: { id: `@exact:${SNOWFLAKE}` } });
    expect(big.isError).toBe(true);
    expect(textOf(big)).toMatch(/arguments\.id: a number beyond ±9007199254740991 .*send it as a string/);
    // the upstream heard nothing of it: not the rounded id, not any call
    expect(readFileSync(received, "utf8")).toBe("");

    const asString = await client.callTool({ name: "delete_object", arguments: { id: SNOWFLAKE } });
    expect(asString.isError).not.toBe(true);
    const safe = await client.callTool({ name: "delete_object", arguments: { id: "@exact:9007199254740991" } });
    expect(safe.isError).not.toBe(true);
    const lines = readFileSync(received, "utf8").trim().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain(`"arguments":{"id":"${SNOWFLAKE}"}`);
    expect(lines[1]).toContain('"arguments":{"id":9007199254740991}');
    await client.close();

    // recorded as every refused call: intercepted, then refused with the reason
    const verify = await runCli(["audit", "verify"], { env });
    expect(verify.code, verify.stderr + verify.stdout).toBe(0);
    const events = readFileSync(join(env["ACP_HOME"] as string, "audit.jsonl"), "utf8")
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as { event_type: string; decision: string | null; metadata: unknown });
    const decided = events.filter((e) => e.event_type === "policy_evaluated");
    expect(decided.map((e) => e.decision)).toEqual(["refuse", "accept", "accept"]);
    expect(JSON.stringify(decided[0]?.metadata)).toContain("unsafe_integer");
    expect(events.filter((e) => e.event_type === "tool_call_forwarded")).toHaveLength(2);
  }, 60_000);
});

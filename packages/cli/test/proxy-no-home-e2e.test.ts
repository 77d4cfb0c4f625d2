/**
 * `acp proxy` started by an MCP client before `acp init`: no home, no terminal. A call that asks says what the
 * person must do: there is no `acp pending` to answer from.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ACP, EVERYTHING } from "./proxy-client-fixture.js";
import { tempRoot } from "./home-fixture.js";

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
});

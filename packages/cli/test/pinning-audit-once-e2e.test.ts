/**
 * A tool changed since it was pinned is audited once by one `acp proxy`, not at every listing of its server:
 * server-everything sends `notifications/tools/list_changed` while it starts, and the proxy lists its tools
 * again at each. An auditor reads each `tool_definition_changed` as something new that happened.
 */
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ACP, EVERYTHING } from "./proxy-client-fixture.js";
import { tempRoot } from "./home-fixture.js";
import { runCli } from "./run.js";

const root = tempRoot("pin-audit-once");
afterAll(root.cleanup);

interface AuditLine {
  readonly event_type: string;
  readonly tool?: string;
  readonly metadata?: { readonly server?: string; readonly before?: { description?: string } };
}

describe("acp proxy audits a changed tool once per start", () => {
  it("writes one tool_definition_changed for a pinned tool changed before the start, and says it once", async () => {
    const home = join(root.dir, ".acp");
    const env = { HOME: root.dir, ACP_HOME: home };
    const policy = join(root.dir, "allow.yml");
    writeFileSync(policy, 'version: "1"\ndefault_action: allow\nrules: []\n');
    const init = await runCli(["init", "--no-passphrase"], { env });
    expect(init.code).toBe(0);

    await start(env, policy);
    expect(events(home)).toEqual([]);

    // `echo` pinned as if the server had described it otherwise at the first start
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
    expect(second.echoDescription).toBe(pinned); // held: served as pinned
    const changed = events(home);
    expect(changed.map((e) => [e.metadata?.server, e.tool, e.metadata?.before?.description])).toEqual([
      ["everything", "echo", pinned],
    ]);
    expect(second.stderr.split("\n").filter((l) => l.includes("tool `echo` changed (description)"))).toHaveLength(1);

    // a new proxy sees the change anew: once more, once
    await start(env, policy);
    expect(events(home)).toHaveLength(2);
  }, 90_000);
});

/** The `tool_definition_changed` events of the home's audit log. */
function events(home: string): AuditLine[] {
  return readFileSync(join(home, "audit.jsonl"), "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as AuditLine)
    .filter((e) => e.event_type === "tool_definition_changed");
}

/** One start of a real `acp proxy` by an SDK client: lists the tools and calls one, then stops. */
async function start(
  env: Record<string, string>,
  policy: string,
): Promise<{ stderr: string; echoDescription: string | undefined }> {
  const stderr: string[] = [];
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [ACP, "proxy", "--upstream", EVERYTHING, "--name", "everything", "--policy", policy],
    env: { PATH: process.env["PATH"] ?? "", ...env },
    stderr: "pipe",
  });
  transport.stderr?.on("data", (chunk: Buffer) => void stderr.push(chunk.toString("utf8")));
  const client = new Client({ name: "pin-audit-agent", version: "1.0.0" });
  await client.connect(transport);
  try {
    const tools = await client.listTools();
    const sum = await client.callTool({ name: "get-sum", arguments: { a: 2, b: 3 } });
    expect(sum.isError).not.toBe(true);
    return { stderr: stderr.join(""), echoDescription: tools.tools.find((t) => t.name === "echo")?.description };
  } finally {
    await client.close();
  }
}

import { execFile } from "node:child_process";
import { createServer, type Server } from "node:http";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { checkWebhookSignature, signWebhookBody } from "@acp/proxy";
import { runCli } from "./run.js";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const ACP = join(ROOT, "packages/cli/bin/acp.js");
const EVERYTHING = join(ROOT, "node_modules/.bin/mcp-server-everything");
const SECRET = "webhook-shared-secret-for-the-test";

interface Received {
  readonly request: { id: string; nonce: string; action: { tool: string } };
  readonly callbackUrl: string;
  readonly signatureOk: boolean;
}

async function post(url: string, body: string, signature: string, timestamp: string): Promise<number> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-ACP-Timestamp": timestamp, "X-ACP-Signature": signature },
    body,
  });
  return res.status;
}

describe("acp proxy with `channel: webhook` in config.yml (a local receiver)", () => {
  const root = tempRoot("proxy-webhook");
  const received: Received[] = [];
  let receiver: Server;
  let home = "";
  let client: Client;

  beforeAll(async () => {
    if (!existsSync(join(ROOT, "packages/cli/dist/wiring/config-channels.js"))) {
      await promisify(execFile)("npx", ["tsc", "-b", "packages/cli"], { cwd: ROOT }).catch(() => undefined);
    }
    receiver = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString("utf8")));
      req.on("end", () => {
        const headers = { timestamp: req.headers["x-acp-timestamp"], signature: req.headers["x-acp-signature"] };
        received.push({
          request: JSON.parse(body) as Received["request"],
          callbackUrl: String(req.headers["x-acp-callback-url"]),
          signatureOk: checkWebhookSignature(SECRET, "delivery", headers, body, new Date(), 300_000) === null,
        });
        res.writeHead(202).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", () => r()));
    const address = receiver.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;
    ({ home } = fixtureHome(root.dir));
    const env = envFor(home);
    writeFileSync(
      join(home, "config.yml"),
      `version: "1"\nchannel: webhook\nwebhook:\n  url: "http://127.0.0.1:${port}/consent"\n  secret: ""\n`,
    );
    expect((await runCli(["config", "set-secret", "webhook.secret"], { env, stdin: `${SECRET}\n` })).code).toBe(0);
    writeFileSync(
      join(home, "policy.yml"),
      'version: "1"\ndefault_action: deny\nrules:\n  - id: echo-asks\n    match: { tool: echo }\n    action: ask\n    timeout: 60\n',
    );
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [ACP, "proxy", "--upstream", EVERYTHING, "--name", "everything"],
      env: { PATH: process.env["PATH"] ?? "", ...env },
      stderr: "pipe",
    });
    client = new Client({ name: "webhook-agent", version: "1.0.0" });
    await client.connect(transport);
  }, 120_000);

  afterAll(async () => {
    await client.close();
    await new Promise<void>((r) => receiver.close(() => r()));
    root.cleanup();
  });

  it("POSTs a signed consent request; a forged callback is refused; the signed approval forwards the call", async () => {
    const call = client.callTool({ name: "echo", arguments: { message: "via webhook" } }, undefined, {
      timeout: 60_000,
    });
    for (let i = 0; i < 400 && received.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    const first = received[0];
    expect(first?.signatureOk).toBe(true);
    expect(first?.request.action.tool).toBe("echo");
    const body = JSON.stringify({
      request_id: first?.request.id,
      nonce: first?.request.nonce,
      decision: "approved",
      approver_id: "ops",
    });
    const timestamp = String(Math.floor(Date.now() / 1000));
    expect(
      await post(
        first?.callbackUrl ?? "",
        body,
        signWebhookBody("wrong secret", "callback", timestamp, body),
        timestamp,
      ),
    ).toBe(401);
    expect(
      await post(first?.callbackUrl ?? "", body, signWebhookBody(SECRET, "callback", timestamp, body), timestamp),
    ).toBe(200);
    const result = await call;
    expect(result.isError).not.toBe(true);
    expect(JSON.stringify(result.content)).toContain("via webhook");
    expect(readFileSync(join(home, "audit.jsonl"), "utf8")).toContain(
      '"approver":{"channel":"webhook","id":"webhook:ops"}',
    );
  });
});

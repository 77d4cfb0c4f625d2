/**
 * `acp proxy` with `channel: webhook` and a receiver written from docs/guides/consent-channels.md alone (node:crypto,
 * raw bytes, nothing from @acp/proxy): the receiver refuses the first POST (500), checks the signature of the
 * retry, and approves with edited arguments; the upstream (server-everything's echo) runs with the edit.
 */
import { execFile } from "node:child_process";
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { runCli } from "./run.js";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const ACP = join(ROOT, "packages/cli/bin/acp.js");
const EVERYTHING = join(ROOT, "node_modules/.bin/mcp-server-everything");
const SECRET = "receiver-from-the-docs-secret";

/** The docs' recipe: "sha256=" + hex HMAC-SHA256(secret, "<label>.<timestamp>." + raw body). */
function sign(label: "acp-delivery" | "acp-callback", timestamp: string, raw: Buffer): string {
  return `sha256=${createHmac("sha256", SECRET).update(`${label}.${timestamp}.`).update(raw).digest("hex")}`;
}

function verified(headers: IncomingMessage["headers"], raw: Buffer): boolean {
  const ts = headers["x-acp-timestamp"];
  const sig = headers["x-acp-signature"];
  if (typeof ts !== "string" || typeof sig !== "string") return false;
  const expected = sign("acp-delivery", ts, raw);
  return (
    Math.abs(Date.now() / 1000 - Number(ts)) <= 300 &&
    expected.length === sig.length &&
    timingSafeEqual(Buffer.from(expected), Buffer.from(sig))
  );
}

interface Got {
  readonly body: { type: string; id?: string; nonce?: string; outcome?: string; action?: { parameters: unknown } };
  readonly callbackUrl: string;
  readonly ok: boolean;
}

describe("acp proxy and a webhook receiver written from the docs", () => {
  const root = tempRoot("proxy-webhook-receiver");
  const got: Got[] = [];
  let refusedFirst = false;
  let receiver: Server;
  let home = "";
  let client: Client;

  beforeAll(async () => {
    if (!existsSync(join(ROOT, "packages/cli/dist/wiring/config-channels.js"))) {
      await promisify(execFile)("npx", ["tsc", "-b", "packages/cli"], { cwd: ROOT }).catch(() => undefined);
    }
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const raw = Buffer.concat(chunks);
        if (!refusedFirst) {
          refusedFirst = true;
          return void res.writeHead(500).end();
        }
        got.push({
          body: JSON.parse(raw.toString("utf8")) as Got["body"],
          callbackUrl: String(req.headers["x-acp-callback-url"]),
          ok: verified(req.headers, raw),
        });
        res.writeHead(204).end();
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
    client = new Client({ name: "webhook-receiver-agent", version: "1.0.0" });
    await client.connect(transport);
  }, 120_000);

  afterAll(async () => {
    await client.close();
    await new Promise<void>((r) => receiver.close(() => r()));
    root.cleanup();
  });

  it("retries after a 500; the receiver's approved_with_modifications reaches the upstream; it hears how it ended", async () => {
    const call = client.callTool({ name: "echo", arguments: { message: "transfer 100 to mallory" } }, undefined, {
      timeout: 60_000,
    });
    for (let i = 0; i < 400 && got.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    const first = got[0];
    expect(refusedFirst).toBe(true);
    expect(first?.ok).toBe(true);
    expect(first?.body.type).toBe("consent_request");
    expect(first?.body.action?.parameters).toEqual({ message: "transfer 100 to mallory" });
    const raw = Buffer.from(
      JSON.stringify({
        request_id: first?.body.id,
        nonce: first?.body.nonce,
        decision: "approved_with_modifications",
        modifications: { message: "transfer 10 to alice" },
        approver_id: "ops",
      }),
    );
    const timestamp = String(Math.floor(Date.now() / 1000));
    const res = await fetch(first?.callbackUrl ?? "", {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        "X-ACP-Timestamp": timestamp,
        "X-ACP-Signature": sign("acp-callback", timestamp, raw),
      },
      body: raw,
    });
    expect(res.status).toBe(200);
    const result = await call;
    expect(result.isError).not.toBe(true);
    const text = JSON.stringify(result.content);
    expect(text).toContain("transfer 10 to alice");
    expect(text).not.toContain("mallory");
    for (let i = 0; i < 200 && !got.some((g) => g.body.type === "consent_settled"); i++) {
      await new Promise((r) => setTimeout(r, 25));
    }
    const settled = got.find((g) => g.body.type === "consent_settled");
    expect(settled?.ok).toBe(true);
    expect(settled?.body.outcome).toBe("approved");
    const audit = readFileSync(join(home, "audit.jsonl"), "utf8");
    expect(audit).toContain('"decision":"approved_with_modifications"');
    expect(audit).toContain('"modifications":{"message":"transfer 10 to alice"}');
  });
});

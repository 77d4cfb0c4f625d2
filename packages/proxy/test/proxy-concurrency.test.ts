import { execFile, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createConnection, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ROOT, textOf } from "./harness.js";

// The real `acp proxy` (the built CLI, as `npm test` builds it) with everything on: the policy, the session
// runtime and the audit chain in an ACP home, serving streamable HTTP on loopback in front of
// server-everything over stdio.
const ACP = join(ROOT, "packages/cli/bin/acp.js");
const EVERYTHING = join(ROOT, "node_modules/.bin/mcp-server-everything");
const CLIENTS = 8;
const ROUNDS = 25;
const IN_FLIGHT = 4;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

async function waitForPort(port: number, child: ChildProcess, stderr: () => string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`acp proxy exited (${child.exitCode}): ${stderr()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ port, host: "127.0.0.1" });
      socket.once("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`acp proxy did not listen: ${stderr()}`);
}

interface AuditLine {
  event_type: string;
  metadata: Record<string, unknown>;
}

describe("acp proxy over streamable HTTP: 8 concurrent SDK clients", () => {
  const home = mkdtempSync(join(tmpdir(), "acp-http-concurrency-"));
  let child: ChildProcess;
  let url = "";
  let stderr = "";

  beforeAll(async () => {
    writeFileSync(
      join(home, "policy.yml"),
      'version: "1"\ndefault_action: deny\nrules:\n  - id: echo\n    match: { tool: echo }\n    action: allow\n',
    );
    const port = await freePort();
    child = spawn(
      process.execPath,
      [ACP, "proxy", "--http", String(port), "--upstream", EVERYTHING, "--name", "everything"],
      { env: { PATH: process.env["PATH"] ?? "", HOME: home, ACP_HOME: home }, stdio: ["ignore", "ignore", "pipe"] },
    );
    child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    await waitForPort(port, child, () => stderr);
    url = `http://127.0.0.1:${port}/mcp`;
  }, 90_000);

  afterAll(async () => {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
    rmSync(home, { recursive: true, force: true });
  });

  it("gives every client exactly its own replies, many calls in flight at once, and audits each under its own session", async () => {
    const clients = await Promise.all(
      Array.from({ length: CLIENTS }, async (_, c) => {
        const client = new Client({ name: `agent-${c}`, version: "1.0.0" });
        await client.connect(new StreamableHTTPClientTransport(new URL(url)));
        return client;
      }),
    );
    const sent = new Map<string, number>();
    const replies: { client: number; message: string; text: string }[] = [];
    // each client keeps IN_FLIGHT calls open at once, all clients together: replies can only be told apart by
    // the JSON-RPC id and the session they belong to
    await Promise.all(
      clients.map(async (client, c) => {
        for (let round = 0; round < ROUNDS; round++) {
          await Promise.all(
            Array.from({ length: IN_FLIGHT }, async (_, k) => {
              const message = `client-${c}-round-${round}-call-${k}-${Math.random().toString(36).slice(2)}`;
              sent.set(message, c);
              const result = await client.callTool({ name: "echo", arguments: { message } }, undefined, {
                timeout: 60_000,
              });
              replies.push({ client: c, message, text: textOf(result) });
            }),
          );
        }
      }),
    );
    await Promise.all(clients.map((c) => c.close()));

    expect(replies).toHaveLength(CLIENTS * ROUNDS * IN_FLIGHT);
    for (const { message, text } of replies) expect(text).toBe(`Echo: ${message}`);

    // the audit saw each call once, forwarded for the session of the client that sent it (the final
    // checkpoint at shutdown flushes the batch)
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
    const forwarded = readFileSync(join(home, "audit.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as AuditLine)
      .filter((e) => e.event_type === "tool_call_forwarded");
    const sessionOfClient = new Map<number, string>();
    const seen = new Set<string>();
    for (const event of forwarded) {
      const message = (event.metadata["arguments"] as { message?: string } | undefined)?.message ?? "";
      const c = sent.get(message);
      expect(c, `audited a call nobody sent: ${message}`).toBeDefined();
      expect(seen.has(message), `audited twice: ${message}`).toBe(false);
      seen.add(message);
      const session = String(event.metadata["session_id"]);
      if (!sessionOfClient.has(c as number)) sessionOfClient.set(c as number, session);
      expect(session).toBe(sessionOfClient.get(c as number));
    }
    expect(seen.size).toBe(sent.size);
    expect(new Set(sessionOfClient.values()).size).toBe(CLIENTS);
  }, 180_000);
});

describe("acp proxy over stdio: 8 proxy processes sharing one ACP home", () => {
  const home = mkdtempSync(join(tmpdir(), "acp-stdio-concurrency-"));
  afterAll(() => rmSync(home, { recursive: true, force: true }));

  it("gives every client its own replies and leaves one intact audit chain written by all eight", async () => {
    writeFileSync(
      join(home, "policy.yml"),
      'version: "1"\ndefault_action: deny\nrules:\n  - id: echo\n    match: { tool: echo }\n    action: allow\n',
    );
    const env = { PATH: process.env["PATH"] ?? "", HOME: home, ACP_HOME: home };
    const clients = await Promise.all(
      Array.from({ length: CLIENTS }, async (_, c) => {
        const client = new Client({ name: `agent-${c}`, version: "1.0.0" });
        const args = [ACP, "proxy", "--upstream", EVERYTHING, "--name", "everything"];
        await client.connect(new StdioClientTransport({ command: process.execPath, args, env, stderr: "ignore" }));
        return client;
      }),
    );
    const sent = new Set<string>();
    const wrong: string[] = [];
    await Promise.all(
      clients.map(async (client, c) => {
        for (let round = 0; round < ROUNDS; round++) {
          await Promise.all(
            Array.from({ length: IN_FLIGHT }, async (_, k) => {
              const message = `proc-${c}-round-${round}-call-${k}-${Math.random().toString(36).slice(2)}`;
              sent.add(message);
              const result = await client.callTool({ name: "echo", arguments: { message } }, undefined, {
                timeout: 60_000,
              });
              if (result.isError === true || textOf(result) !== `Echo: ${message}`) wrong.push(textOf(result));
            }),
          );
        }
      }),
    );
    // closing stdin lets each proxy flush its audit queue and write its final checkpoint before it exits
    await Promise.all(clients.map((c) => c.close()));
    expect(wrong).toEqual([]);

    const forwarded = readFileSync(join(home, "audit.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as AuditLine)
      .filter((e) => e.event_type === "tool_call_forwarded")
      .map((e) => (e.metadata["arguments"] as { message?: string } | undefined)?.message ?? "");
    expect(new Set(forwarded).size).toBe(forwarded.length);
    expect(new Set(forwarded)).toEqual(sent);
    const verify = await promisify(execFile)(process.execPath, [ACP, "audit", "verify"], { env }).then(
      () => 0,
      (err: { code?: number }) => err.code ?? 1,
    );
    expect(verify).toBe(0);
  }, 240_000);
});

describe("acp proxy over stdio stopped by SIGTERM", () => {
  const root = mkdtempSync(join(tmpdir(), "acp-stdio-sigterm-"));
  const home = join(root, "home");
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("flushes the queued audit events of every answered call and writes its final checkpoint before exiting", async () => {
    // a home with keys, so the proxy signs checkpoints: the final one is written only by a graceful close
    const env = { PATH: process.env["PATH"] ?? "", HOME: root, ACP_HOME: home, ACP_PASSPHRASE: "test-passphrase" };
    await promisify(execFile)(process.execPath, [ACP, "init"], { env });
    writeFileSync(
      join(home, "policy.yml"),
      'version: "1"\ndefault_action: deny\nrules:\n  - id: echo\n    match: { tool: echo }\n    action: allow\n',
    );
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [ACP, "proxy", "--upstream", EVERYTHING, "--name", "everything"],
      env,
      stderr: "ignore",
    });
    const client = new Client({ name: "agent", version: "1.0.0" });
    await client.connect(transport);
    const answered: string[] = [];
    for (let i = 0; i < 40; i++) {
      const message = `before-sigterm-${i}`;
      const result = await client.callTool({ name: "echo", arguments: { message } });
      if (textOf(result) === `Echo: ${message}`) answered.push(message);
    }
    const pid = transport.pid;
    expect(pid).not.toBeNull();
    const closed = new Promise<void>((resolve) => (client.onclose = () => resolve()));
    process.kill(pid as number, "SIGTERM");
    await closed;
    const events = readFileSync(join(home, "audit.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as AuditLine);
    const completed = events.filter((e) => e.event_type === "tool_call_completed").length;
    expect(answered).toHaveLength(40);
    expect(completed).toBe(40);
    expect(events.at(-1)?.event_type).toBe("checkpoint");
  }, 120_000);
});

import { execFile } from "node:child_process";
import { createServer, type Server } from "node:http";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { parse as parseYaml } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { checkWebhookSignature } from "@acp/proxy";
import { runCli } from "./run.js";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";

/**
 * `acp proxy --config FILE` takes every config key from FILE: `credentials:`, `redaction:`, the consent
 * channel (`channel:` / `webhook:`) and `session:` — never from `$ACP_HOME/config.yml`, which here holds
 * different, valid values for the same keys. The secrets stay in the home (vault, key). (`graph:`:
 * proxy-config-graph-e2e.test.ts.)
 */

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const ACP = join(ROOT, "packages/cli/bin/acp.js");
const EVERYTHING = join(ROOT, "node_modules/.bin/mcp-server-everything");
const run = promisify(execFile);
const SECRET = "webhook-secret-of-the-config-file-test";
const FILE_CANARY = "canary-file-4b1e-value";
const HOME_CANARY = "canary-home-93d0-value";
// echo and get-sum run; anything else asks
const POLICY = `version: "1"
default_action: ask
rules:
  - id: echo
    match: { tool: echo }
    action: allow
  - id: sum
    match: { tool: get-sum }
    action: allow
`;

interface Received {
  readonly body: string;
  readonly request: { id: string; action: { tool: string } };
  readonly signatureOk: boolean;
}

function proxyArgs(config: string | null): string[] {
  return [ACP, "proxy", ...(config !== null ? ["--config", config] : []), "--upstream", EVERYTHING, "-n", "everything"];
}

/** Runs `acp proxy` expecting it to stop before serving; its exit code and stderr. */
async function failedStart(
  env: Record<string, string>,
  config: string | null,
): Promise<{ code?: number; stderr?: string }> {
  return run(process.execPath, proxyArgs(config), {
    env: { PATH: process.env["PATH"] ?? "", ...env },
    timeout: 60_000,
  }).then(
    () => ({ code: 0 }),
    (err: { code?: number; stderr?: string }) => err,
  );
}

async function connect(env: Record<string, string>, config: string | null): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: proxyArgs(config),
    env: { PATH: process.env["PATH"] ?? "", ...env },
    stderr: "pipe",
  });
  const client = new Client({ name: "config-file-agent", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

describe("acp proxy --config FILE: every config key comes from FILE, none from $ACP_HOME/config.yml", () => {
  const root = tempRoot("proxy-config-file");
  const received: Received[] = [];
  let receiver: Server;
  let home = "";
  let env: Record<string, string> = {};
  let file = "";
  let client: Client;

  beforeAll(async () => {
    if (!existsSync(join(ROOT, "packages/cli/dist/wiring/config-in-use.js"))) {
      await run("npx", ["tsc", "-b", "packages/cli"], { cwd: ROOT }).catch(() => undefined);
    }
    receiver = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString("utf8")));
      req.on("end", () => {
        const headers = { timestamp: req.headers["x-acp-timestamp"], signature: req.headers["x-acp-signature"] };
        received.push({
          body,
          request: JSON.parse(body) as Received["request"],
          signatureOk: checkWebhookSignature(SECRET, "delivery", headers, body, new Date(), 300_000) === null,
        });
        res.writeHead(202).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", () => r()));
    const address = receiver.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;

    ({ home } = fixtureHome(root.dir));
    env = envFor(home);
    writeFileSync(join(home, "policy.yml"), POLICY);
    expect((await runCli(["vault", "set", "FILE_TOKEN"], { env, stdin: `${FILE_CANARY}\n` })).code).toBe(0);
    expect((await runCli(["vault", "set", "HOME_TOKEN"], { env, stdin: `${HOME_CANARY}\n` })).code).toBe(0);
    // the home's config: valid, and different from FILE for every key
    writeFileSync(
      join(home, "config.yml"),
      [
        'version: "1"',
        "channel: prompt",
        'webhook:\n  url: ""\n  secret: ""',
        "credentials:\n  - { secret: HOME_TOKEN, server: everything, tool: echo, argument: message }",
        "redaction:\n  values: ['/lion-[0-9]+/']",
        "",
      ].join("\n"),
    );
    // sealed with the home's key (it writes the home's config.yml); FILE carries the sealed value
    expect((await runCli(["config", "set-secret", "webhook.secret"], { env, stdin: `${SECRET}\n` })).code).toBe(0);
    const sealed = (parseYaml(readFileSync(join(home, "config.yml"), "utf8")) as { webhook: { secret: string } })
      .webhook.secret;
    expect(sealed).toMatch(/^encrypted:/);
    file = join(root.dir, "elsewhere.yml");
    writeFileSync(
      file,
      [
        'version: "1"',
        "channel: webhook",
        `webhook:\n  url: "http://127.0.0.1:${port}/consent"\n  secret: "${sealed}"`,
        "credentials:\n  - { secret: FILE_TOKEN, server: everything, tool: echo, argument: message }",
        "redaction:\n  values: ['/zebra-[0-9]+/']",
        "session:\n  escalate_after_instructions: false",
        "",
      ].join("\n"),
    );
    client = await connect(env, file);
  }, 120_000);

  afterAll(async () => {
    await client.close();
    await new Promise<void>((r) => receiver.close(() => r()));
    root.cleanup();
  });

  it("injects the vault entry FILE's `credentials:` names, not the one the home's config.yml names", async () => {
    const result = await client.callTool({ name: "echo", arguments: { message: "placeholder" } });
    const text = JSON.stringify(result.content);
    expect(text).toContain("[REDACTED]");
    expect(text).not.toContain(FILE_CANARY);
    expect(text).not.toContain(HOME_CANARY);
    const audit = readFileSync(join(home, "audit.jsonl"), "utf8");
    expect(audit).toContain('"credential_injected"');
    expect(audit).toContain("FILE_TOKEN");
    expect(audit).not.toContain("HOME_TOKEN");
  });

  it("asks through FILE's webhook channel, showing arguments redacted by FILE's `redaction:` patterns", async () => {
    const call = client.callTool(
      { name: "get-annotated-message", arguments: { messageType: "zebra-12345 lion-67890" } },
      undefined,
      { timeout: 60_000 },
    );
    for (let i = 0; i < 400 && received.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    const first = received[0];
    expect(first?.signatureOk).toBe(true);
    expect(first?.request.action.tool).toBe("get-annotated-message");
    expect(first?.body).not.toContain("zebra-12345");
    expect(first?.body).toContain("lion-67890");
    expect((await runCli(["deny", first?.request.id ?? "", "--reason", "test"], { env })).code).toBe(0);
    expect((await call).isError).toBe(true);
  });

  it("records arguments in the audit redacted by FILE's patterns, not the home's", async () => {
    await client.callTool({ name: "get-sum", arguments: { a: 1, b: 2, note: "zebra-24680 lion-13579" } });
    // an accepted call's events reach the file with the next group commit (fsync: batch, 20 ms window)
    let audit = "";
    for (let i = 0; i < 200 && !audit.includes("lion-13579"); i++) {
      await new Promise((r) => setTimeout(r, 50));
      audit = readFileSync(join(home, "audit.jsonl"), "utf8");
    }
    expect(audit).toContain("lion-13579");
    expect(audit).not.toContain("zebra-24680");
  });

  it("a home config.yml with bad keys does not matter under --config FILE (and does without it)", async () => {
    const other = fixtureHome(root.dir).home;
    const otherEnv = envFor(other);
    writeFileSync(join(other, "config.yml"), 'version: "1"\ncredentials: 7\nchannel: carrier-pigeon\n');
    const alone = await failedStart(otherEnv, null);
    expect(alone.code).toBe(4);
    expect(alone.stderr).toContain(join(other, "config.yml"));
    const good = join(root.dir, "good.yml");
    writeFileSync(good, 'version: "1"\nchannel: prompt\n');
    const fine = await connect(otherEnv, good);
    const { tools } = await fine.listTools();
    expect(tools.map((t) => t.name)).toContain("echo");
    await fine.close();
  });

  it("bad keys in FILE stop the proxy with exit 4, every problem named with FILE", async () => {
    const bad = join(root.dir, "bad-keys.yml");
    writeFileSync(
      bad,
      [
        'version: "1"',
        "channel: telegrm",
        "credentials:\n  - { secret: FILE_TOKEN, tool: echo, argument: message, colour: red }",
        "redaction:\n  values: ['(']",
        "session:\n  reads: { after_instructions: maybe }",
        "",
      ].join("\n"),
    );
    const failed = await failedStart(env, bad);
    expect(failed.code).toBe(4);
    const lines = (failed.stderr ?? "").split("\n");
    for (const key of ["`channel`", "credentials.0", "redaction.values", "`session.reads.after_instructions`"]) {
      expect(lines.find((l) => l.includes(key)) ?? `no line names ${key}`).toContain(bad);
    }
    expect(failed.stderr).toContain("session.reads.after_instructions");
  });

  it("FILE that is not valid YAML stops the proxy with exit 4 at FILE:LINE:COL (duplicate keys too)", async () => {
    const broken = join(root.dir, "broken.yml");
    writeFileSync(broken, 'version: "1"\nchannel: prompt\nchannel: webhook\n');
    const failed = await failedStart(env, broken);
    expect(failed.code).toBe(4);
    expect(failed.stderr).toContain(`${broken}:3:1:`);
  });
});

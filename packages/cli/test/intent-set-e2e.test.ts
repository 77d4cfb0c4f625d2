import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { createProxy, type AcpProxy } from "@acp/proxy";
import type { CliContext } from "../src/context.js";
import { createProxyWiring } from "../src/wiring/proxy-wiring.js";
import { run } from "../src/main.js";
import { runCli } from "./run.js";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const EVERYTHING = join(ROOT, "node_modules/.bin/mcp-server-everything");
const SESSION = "session_intent_e2e_1";

function text(result: unknown): string {
  return JSON.stringify((result as { content?: unknown }).content);
}

describe("acp intent set: a person changes a live session's intent; the proxy applies it before the next call", () => {
  const root = tempRoot("intent-set-e2e");
  let env: Record<string, string> = {};
  let home = "";
  let proxy: AcpProxy;
  let client: Client;
  let wiring: ReturnType<typeof createProxyWiring>;
  const stderr: string[] = [];

  beforeAll(async () => {
    home = fixtureHome(root.dir).home;
    env = envFor(home);
    // echo and get-sum are reads (server-everything is not marked trusted, so its `readOnlyHint` is set aside):
    // as writes, the session runtime would ask about each `tick` an earlier result had echoed
    writeFileSync(
      join(home, "policy.yml"),
      'version: "1"\ndefault_action: allow\nclassify:\n  - { tool: echo, category: read }\n  - { tool: get-sum, category: read }\n',
    );
    writeFileSync(
      join(root.dir, "b.yml"),
      'goal: echo and add\nallowed_actions: ["everything.echo", "everything.get-sum", "everything.wipe-*"]\n',
    );
    writeFileSync(join(root.dir, "a2.yml"), 'goal: echo only\nallowed_actions: ["everything.echo"]\n');
    writeFileSync(
      join(root.dir, "bad.yml"),
      'goal: broken\nallowed_actions:\n  - "everything.echo"\nforbidden_actions: 7\n',
    );
    const ctx: CliContext = {
      io: {
        stdout: { write: () => true },
        stderr: { write: (s: string) => stderr.push(s) },
        readStdin: () => Promise.resolve(""),
        stdinIsTTY: false,
        env,
        cwd: root.dir,
        now: () => new Date(),
      },
      exitCode: 0,
    };
    wiring = createProxyWiring(ctx);
    const intent = { goal: "echo things back", allowed_actions: ["everything.echo"] };
    const decide = wiring.createDecide({ policyPath: join(home, "policy.yml"), home, trustedServers: [], intent });
    const observer = wiring.createObserver?.({ home });
    const plans = wiring.createPlans?.({ home });
    proxy = createProxy({
      upstreams: [{ name: "everything", transport: "stdio", command: EVERYTHING, args: [] }],
      decide,
      ...(observer !== undefined ? { observer } : {}),
      ...(plans !== undefined ? { plans } : {}),
      broker: wiring.createBroker({ home }),
      audit: wiring.createAudit({ home }),
      now: () => new Date(),
    });
    await proxy.start();
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await proxy.connect(serverSide, SESSION);
    client = new Client({ name: "intent-agent", version: "1.0.0" });
    await client.connect(clientSide);
  }, 120_000);

  afterAll(async () => {
    await client.close();
    await proxy.close();
    await wiring.close();
    root.cleanup();
  });

  it("refuses a call outside intent A, and lists the live session with its agent and intent", async () => {
    const sum = await client.callTool({ name: "get-sum", arguments: { a: 1, b: 2 } });
    expect(sum.isError).toBe(true);
    // no rule refused it: the session did, and says so (not "refused by policy")
    expect(text(sum)).toContain("refused by the session: ");
    // a call within the intent says so, and claims no plan (none was approved)
    expect((await client.callTool({ name: "echo", arguments: { message: "in" } })).isError).not.toBe(true);
    // accepted calls' events are group-committed: read until the call's judgment is written
    const judgedEcho = (): string | undefined =>
      readFileSync(join(home, "audit.jsonl"), "utf8")
        .trim()
        .split("\n")
        .filter((line) => line.includes('"event_type":"policy_evaluated"') && line.includes('"tool":"echo"'))
        .at(-1);
    await expect.poll(judgedEcho, { timeout: 60_000 }).toBeDefined();
    const judged = judgedEcho() ?? "";
    expect(judged).toContain('"message":"within the intent"');
    expect(judged).not.toContain("approved plan");
    const listed = await runCli(["intent", "set", "--list", "--json"], { env, now: new Date() });
    expect(listed.code).toBe(0);
    const rows = JSON.parse(listed.stdout) as { id: string; agent: string; status: string; intent_version: number }[];
    expect(rows).toContainEqual(
      expect.objectContaining({ id: SESSION, agent: "intent-agent", status: "live", intent_version: 1 }),
    );
  });

  it("a session whose first call is a plan is listed with its agent too (it was `-`)", async () => {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await proxy.connect(serverSide, "session_intent_e2e_plan_first");
    const planner = new Client({ name: "planning-agent", version: "1.0.0" });
    await planner.connect(clientSide);
    try {
      const plan = { steps: [{ action: "everything.echo" }] };
      const submitted = await planner.callTool({ name: "acp_submit_plan", arguments: { plan } });
      expect(submitted.isError, text(submitted)).not.toBe(true);
      const listed = await runCli(["intent", "set", "--list"], { env, now: new Date() });
      expect(listed.code).toBe(0);
      const line = listed.stdout.split("\n").find((l) => l.startsWith("session_intent_e2e_plan_first "));
      expect(line).toMatch(/^session_intent_e2e_plan_first {2}live {2}planning-agent {2}since /);
    } finally {
      await planner.close();
    }
  });

  it("a malformed intent exits 4 with file:line:col and changes nothing", async () => {
    const out = await runCli(["intent", "set", "--session-id", SESSION, join(root.dir, "bad.yml")], {
      env,
      now: new Date(),
    });
    expect(out.code).toBe(4);
    expect(out.stderr).toMatch(/bad\.yml:4:\d+: /);
    const listed = JSON.parse((await runCli(["intent", "set", "--list", "--json"], { env })).stdout) as {
      last_update: unknown;
    }[];
    expect(listed[0]?.last_update).toBeNull();
  });

  it("without the passphrase the update cannot be signed (exit 1) and nothing is queued", async () => {
    const noPass = { HOME: env["HOME"] ?? "", ACP_HOME: home };
    const out = await runCli(["intent", "set", "--session-id", SESSION, join(root.dir, "b.yml")], { env: noPass });
    expect(out.code).toBe(1);
    expect(out.stderr).toContain("cannot sign the update");
    // a person runs this command: the fix is theirs, not the proxy's environment or an MCP client's config
    expect(out.stderr).toContain("set ACP_PASSPHRASE or run in a terminal to be asked");
    expect(out.stderr).not.toContain("proxy");
    const listed = JSON.parse((await runCli(["intent", "set", "--list", "--json"], { env })).stdout) as {
      last_update: unknown;
    }[];
    expect(listed[0]?.last_update).toBeNull();
  });

  it("in a terminal without ACP_PASSPHRASE it asks for the passphrase; a wrong one queues nothing", async () => {
    const asked: string[] = [];
    let stderrText = "";
    const code = await run(["intent", "set", "--session-id", SESSION, join(root.dir, "b.yml")], {
      stdout: { write: () => true },
      stderr: { write: (s: string) => (stderrText += s) },
      readStdin: () => Promise.resolve(""),
      stdinIsTTY: true,
      promptHidden: (question: string) => {
        asked.push(question);
        return Promise.resolve("not the passphrase");
      },
      env: { HOME: env["HOME"] ?? "", ACP_HOME: home },
      cwd: root.dir,
      now: () => new Date(),
    });
    expect(asked).toEqual(["passphrase for the acp private key: "]);
    expect(code).toBe(1);
    expect(stderrText).toContain("cannot sign the update: wrong passphrase");
    const listed = JSON.parse((await runCli(["intent", "set", "--list", "--json"], { env })).stdout) as {
      last_update: unknown;
    }[];
    expect(listed[0]?.last_update).toBeNull();
  });

  it("an unknown session id exits 4 and a usage error exits 2", async () => {
    const unknown = await runCli(["intent", "set", "--session-id", "session_nope", join(root.dir, "b.yml")], { env });
    expect(unknown.code).toBe(4);
    expect(unknown.stderr).toContain("no session `session_nope`");
    expect((await runCli(["intent", "set", join(root.dir, "b.yml")], { env })).code).toBe(2);
  });

  it("after `acp intent set` to B the same call passes, and the change is audited with both hashes", async () => {
    const set = await runCli(["intent", "set", "--session-id", SESSION, join(root.dir, "b.yml"), "--json"], {
      env,
      now: new Date(),
    });
    expect(set.code).toBe(0);
    const queued = JSON.parse(set.stdout) as { to_version: number; intent_hash: string; from_hash: string };
    expect(queued.to_version).toBe(2);
    const sum = await client.callTool({ name: "get-sum", arguments: { a: 1, b: 2 } });
    expect(sum.isError).not.toBe(true);
    expect(text(sum)).toContain("3");
    const listed = JSON.parse((await runCli(["intent", "set", "--list", "--json"], { env })).stdout) as {
      intent_version: number;
      intent_hash: string;
      last_update: { status: string };
    }[];
    expect(listed[0]).toMatchObject({
      intent_version: 2,
      intent_hash: queued.intent_hash,
      last_update: { status: "applied" },
    });
    const audit = readFileSync(join(home, "audit.jsonl"), "utf8");
    const line = audit.split("\n").find((l) => l.includes('"intent_updated"'));
    expect(line).toBeDefined();
    expect(line).toContain(queued.from_hash);
    expect(line).toContain(queued.intent_hash);
  });

  it("a plan that only narrows intent B is approved by rule, with nobody asked; only its steps run", async () => {
    const plan = { steps: [{ action: "everything.echo" }] };
    const out = await client.callTool({ name: "acp_submit_plan", arguments: { plan } });
    expect(out.isError).not.toBe(true);
    expect(text(out)).toContain("approved by rule");
    const pending = JSON.parse((await runCli(["pending", "--json"], { env })).stdout || "[]") as unknown[];
    expect(pending).toEqual([]);
    expect(text(await client.callTool({ name: "echo", arguments: { message: "in plan" } }))).toContain("in plan");
    expect((await client.callTool({ name: "get-sum", arguments: { a: 1, b: 2 } })).isError).toBe(true);
    const twice = await client.callTool({ name: "acp_submit_plan", arguments: { plan } });
    expect(twice.isError).toBe(true);
    expect(text(twice)).toContain("already approved");
    const audit = readFileSync(join(home, "audit.jsonl"), "utf8");
    expect(audit).toContain("plan-narrows-intent");
  });

  it("a plan naming a tool no upstream offers is refused and nothing runs", async () => {
    const plan = { steps: [{ action: "everything.echo" }, { action: "everything.wipe-disk" }] };
    const out = await client.callTool({ name: "acp_submit_plan", arguments: { plan } });
    expect(out.isError).toBe(true);
    expect(text(out)).toContain("no upstream server offers");
    // the approved plan is still the one in force
    expect(text(await client.callTool({ name: "echo", arguments: { message: "still" } }))).toContain("still");
  });

  it("--wait returns once the proxy applied the update at the session's next call; the plan made for B is void", async () => {
    const c = join(root.dir, "c.yml");
    writeFileSync(c, 'goal: echo and add again\nallowed_actions: ["everything.echo", "everything.get-sum"]\n');
    let done = false;
    const waiting = runCli(["intent", "set", "--session-id", SESSION, c, "--wait", "30"], {
      env,
      now: new Date(),
    }).finally(() => (done = true));
    for (let i = 0; i < 200 && !done; i++) {
      await client.callTool({ name: "echo", arguments: { message: "tick" } });
      await new Promise((r) => setTimeout(r, 100));
    }
    const out = await waiting;
    expect(out.code).toBe(0);
    expect(out.stdout).toContain("now runs intent version 3");
    expect((await client.callTool({ name: "get-sum", arguments: { a: 2, b: 2 } })).isError).not.toBe(true);
  });

  it("an update signed with a key the proxy did not start with is refused (exit 3 with --wait); nothing changes", async () => {
    const other = fixtureHome(root.dir).home;
    cpSync(join(other, "keys"), join(home, "keys"), { recursive: true, force: true });
    let done = false;
    const waiting = runCli(["intent", "set", "--session-id", SESSION, join(root.dir, "a2.yml"), "--wait", "30"], {
      env,
      now: new Date(),
    }).finally(() => (done = true));
    for (let i = 0; i < 200 && !done; i++) {
      await client.callTool({ name: "echo", arguments: { message: "tick" } });
      await new Promise((r) => setTimeout(r, 100));
    }
    const out = await waiting;
    expect(out.code).toBe(3);
    expect(out.stderr).toContain("intent_update_signature_invalid");
    // still intent version 3: get-sum passes, as before
    expect((await client.callTool({ name: "get-sum", arguments: { a: 2, b: 3 } })).isError).not.toBe(true);
    expect(readFileSync(join(home, "audit.jsonl"), "utf8")).toContain("intent_update_refused");
  });

  it("a session that has ended cannot be changed (exit 3)", async () => {
    await client.close();
    await new Promise((r) => setTimeout(r, 50));
    const out = await runCli(["intent", "set", "--session-id", SESSION, join(root.dir, "b.yml")], { env });
    expect(out.code).toBe(3);
    expect(out.stderr).toContain("has ended");
  });
});

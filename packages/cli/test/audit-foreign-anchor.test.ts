/**
 * An audit log whose anchor (`audit.jsonl.checkpoint`) another key signed: restored or copied from another
 * home, or left by an `acp proxy` run before `acp init`. Before, the writer only checked that the anchor's
 * line was in the log, extended the log and signed it with the home's key, and only `acp audit verify`
 * said so later (exit 3, `bad_checkpoint_signature`). Now `acp proxy` and `acp serve` refuse to extend it
 * (`audit_anchor_mismatch`) and say what to do; `acp serve` on a home without keys (its key lives only as
 * long as the process) checks only the anchor's place, as before.
 */
import { generateKeyPairSync, type KeyObject } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, describe, expect, it } from "vitest";
import { openAuditLog } from "@acp/store";
import { ACP, EVERYTHING } from "./proxy-client-fixture.js";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";
import { runCli } from "./run.js";
import { freshHome, serveFailure, startServe } from "./serve-fixture.js";

const root = tempRoot("audit-foreign-anchor");
afterAll(root.cleanup);

/** A log of 3 events and its closing checkpoint (line 4), signed with `key`, with its anchor beside it. */
async function signedLog(path: string, key: KeyObject): Promise<void> {
  const log = await openAuditLog(path, { clock: () => new Date(), signer: key });
  for (let i = 0; i < 3; i++) await log.append({ event_type: "policy_evaluated", tool: "t", decision: "accept" });
  await log.close();
}

const REFUSED =
  /audit\.jsonl: the checkpoint of its anchor \(`.*audit\.jsonl\.checkpoint`\) was not signed by this home's key/;

describe("an audit log whose anchor another key signed", () => {
  it("is not extended by acp proxy: the call is refused and the log left as it was", async () => {
    const home = join(root.dir, "proxy", ".acp");
    const env = { HOME: join(root.dir, "proxy"), ACP_HOME: home };
    expect((await runCli(["init", "--no-passphrase"], { env })).code).toBe(0);
    const policy = join(root.dir, "proxy", "allow.yml");
    writeFileSync(policy, 'version: "1"\ndefault_action: allow\nrules: []\n');
    const log = join(home, "audit.jsonl");
    await signedLog(log, generateKeyPairSync("ed25519").privateKey);
    const before = readFileSync(log, "utf8");
    const anchor = readFileSync(`${log}.checkpoint`, "utf8");

    const stderr: string[] = [];
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [ACP, "proxy", "--upstream", EVERYTHING, "--name", "everything", "--policy", policy],
      env: { PATH: process.env["PATH"] ?? "", ...env },
      stderr: "pipe",
    });
    transport.stderr?.on("data", (chunk: Buffer) => void stderr.push(chunk.toString("utf8")));
    const client = new Client({ name: "foreign-anchor-agent", version: "1.0.0" });
    let outcome: string;
    try {
      await client.connect(transport);
      const sum = await client.callTool({ name: "get-sum", arguments: { a: 2, b: 3 } });
      outcome = JSON.stringify(sum);
      expect(sum.isError).toBe(true);
    } catch (err) {
      outcome = err instanceof Error ? err.message : String(err);
    } finally {
      await client.close();
    }
    expect(`${outcome}\n${stderr.join("")}`).toMatch(REFUSED);
    expect(readFileSync(log, "utf8")).toBe(before);
    expect(readFileSync(`${log}.checkpoint`, "utf8")).toBe(anchor);
  }, 60_000);

  it("is not extended by acp serve on a home with keys: it does not start", async () => {
    const { home } = fixtureHome(root.dir);
    const log = join(home, "audit.jsonl");
    await signedLog(log, generateKeyPairSync("ed25519").privateKey);
    const before = readFileSync(log, "utf8");
    const failure = await serveFailure(home, ["--port", "0"], envFor(home));
    expect(failure?.message).toMatch(REFUSED);
    expect(failure?.message).toContain("restore the home's keys");
    expect(readFileSync(log, "utf8")).toBe(before);
  });

  it("is extended by acp serve on a home without keys, whose key lives only as long as the process", async () => {
    const home = freshHome();
    const log = join(home, "audit.jsonl");
    // an earlier acp serve of this home, with its own process-lived key
    await signedLog(log, generateKeyPairSync("ed25519").privateKey);
    const before = readFileSync(log, "utf8");
    const serve = startServe(home, ["--port", "0"]);
    // it opens the audit log before it listens: a refusal would reject `done` and never be ready
    const started = await Promise.race([serve.ready.then(() => "ready"), serve.done.then(() => "stopped")]);
    expect(started).toBe("ready");
    serve.stop();
    await serve.done;
    expect(serve.output().stderr).not.toMatch(REFUSED);
    expect(readFileSync(log, "utf8").startsWith(before)).toBe(true);
  });
});

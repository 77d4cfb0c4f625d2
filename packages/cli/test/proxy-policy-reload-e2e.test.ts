import { createHash } from "node:crypto";
import { execFile } from "node:child_process";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";
import { runCli } from "./run.js";

/**
 * A running `acp proxy` picks up an edited policy.yml: the next call after the edit is decided by the new
 * file (its refusal names the new rule), a file that does not validate leaves the last good policy in force
 * and is named on stderr at FILE:LINE:COL once, and every reload is in the verified audit chain, as is the
 * policy version each decision used.
 */

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const ACP = join(ROOT, "packages/cli/bin/acp.js");
const EVERYTHING = join(ROOT, "node_modules/.bin/mcp-server-everything");
const run = promisify(execFile);

// `echo` is classified a read: server-everything is not marked trusted, so its `readOnlyHint` is set aside, and
// as a write each call repeating text an earlier result held ("Echo: hi") would be put to a person
const ECHO_IS_READ = "classify:\n  - { tool: echo, category: read }\n";
const ALLOWS =
  'version: "1"\ndefault_action: allow\nrules:\n  - id: echo-allowed\n    match: { tool: echo }\n    action: allow\n' +
  ECHO_IS_READ;
const DENIES =
  'version: "1"\ndefault_action: allow\nrules:\n  - id: echo-denied\n    match: { tool: echo }\n    action: deny\n' +
  ECHO_IS_READ;
// would allow echo again, but `alow` does not validate
const INVALID =
  'version: "1"\ndefault_action: allow\nrules:\n  - id: echo-allowed\n    match: { tool: echo }\n    action: alow\n' +
  ECHO_IS_READ;

const sha256 = (text: string): string => `sha256:${createHash("sha256").update(text).digest("hex")}`;

type CallResult = Awaited<ReturnType<Client["callTool"]>>;

/** The rule that refused a call, or `accepted`. */
function outcome(result: CallResult): string {
  return result.isError === true ? (/"rule":"([^"]+)"/.exec(JSON.stringify(result))?.[1] ?? "error") : "accepted";
}

/** Calls `echo` until `until` holds (the proxy looks at its file at most every 250 ms); bounded. */
async function callUntil(client: Client, until: (result: CallResult) => boolean): Promise<CallResult> {
  for (let i = 0; i < 400; i++) {
    const result = await client.callTool({ name: "echo", arguments: { message: "hi" } });
    if (until(result)) return result;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error("the proxy never decided as expected");
}

interface AuditLine {
  event_type: string;
  decision: string | null;
  policy_rule: string | null;
  metadata: Record<string, unknown>;
}

describe("acp proxy: an edited policy.yml is picked up while the proxy runs", () => {
  const root = tempRoot("proxy-policy-reload");
  let env: Record<string, string> = {};
  let home = "";

  beforeAll(async () => {
    if (!existsSync(join(ROOT, "packages/cli/dist/wiring/policy-reload.js"))) {
      await run("npx", ["tsc", "-b", "packages/cli"], { cwd: ROOT }).catch(() => undefined);
    }
    ({ home } = fixtureHome(root.dir));
    env = envFor(home);
    writeFileSync(join(home, "policy.yml"), ALLOWS);
  }, 120_000);

  afterAll(() => root.cleanup());

  it("refuses with the new rule after an edit, keeps the last good policy over an invalid one, and audits both", async () => {
    const policy = join(home, "policy.yml");
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [ACP, "proxy", "--upstream", EVERYTHING, "-n", "everything"],
      env: { PATH: process.env["PATH"] ?? "", ...env },
      stderr: "pipe",
    });
    let stderr = "";
    transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    const client = new Client({ name: "policy-reload-agent", version: "1.0.0" });
    await client.connect(transport);
    try {
      expect(outcome(await client.callTool({ name: "echo", arguments: { message: "hi" } }))).toBe("accepted");

      // an editor's save: a new file renamed over the old one
      writeFileSync(`${policy}.tmp`, DENIES);
      renameSync(`${policy}.tmp`, policy);
      const refused = await callUntil(client, (r) => r.isError === true);
      expect(outcome(refused)).toBe("policy:echo-denied");
      expect(stderr).toContain(
        `acp proxy: policy ${policy} changed: deciding with ${sha256(DENIES)} from now on (was ${sha256(ALLOWS)})`,
      );

      // written in place, and it does not validate: the last good policy stays in force, said once
      writeFileSync(policy, INVALID);
      await callUntil(client, () => stderr.includes(`${policy}:6:13: while reading rule \`echo-allowed\``));
      expect(stderr).toContain(
        `acp proxy: error: policy ${policy} changed but cannot be used, so ${sha256(DENIES)} stays in force:`,
      );
      for (let i = 0; i < 3; i++) {
        expect(outcome(await client.callTool({ name: "echo", arguments: { message: "hi" } }))).toBe(
          "policy:echo-denied",
        );
      }
      expect(stderr.split("changed but cannot be used").length - 1).toBe(1);
    } finally {
      await client.close();
    }

    expect((await runCli(["audit", "verify"], { env })).code).toBe(0);
    const events = readFileSync(join(home, "audit.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as AuditLine);
    const reloaded = events.filter((e) => e.event_type === "policy_reloaded");
    expect(reloaded.map((e) => e.metadata)).toEqual([
      { file: policy, policy_hash: sha256(DENIES), previous_policy_hash: sha256(ALLOWS) },
    ]);
    const refusedReload = events.filter((e) => e.event_type === "policy_reload_refused");
    expect(refusedReload).toHaveLength(1);
    expect(refusedReload[0]?.metadata).toMatchObject({
      file: policy,
      policy_hash: sha256(DENIES),
      refused_policy_hash: sha256(INVALID),
    });
    expect(String((refusedReload[0]?.metadata["problems"] as string[])[0])).toContain(`${policy}:6:13:`);
    // every decision names the policy it used; none on the new one comes before its reload
    const evaluated = events.filter((e) => e.event_type === "policy_evaluated");
    expect(evaluated[0]?.metadata["policy_hash"]).toBe(sha256(ALLOWS));
    expect(evaluated.at(-1)?.metadata["policy_hash"]).toBe(sha256(DENIES));
    const firstOnNew = events.findIndex(
      (e) => e.metadata["policy_hash"] === sha256(DENIES) && e.event_type === "policy_evaluated",
    );
    expect(firstOnNew).toBeGreaterThan(events.indexOf(reloaded[0] as AuditLine));
    expect(
      evaluated.every((e) => e.metadata["policy_hash"] === sha256(e.decision === "accept" ? ALLOWS : DENIES)),
    ).toBe(true);
  }, 120_000);

  it("a named pipe as the policy stops the start at once (exit 1), not waited on", async () => {
    const fifo = join(root.dir, "policy-pipe.yml");
    await run("mkfifo", [fifo]);
    const failed = await run(process.execPath, [ACP, "proxy", "--policy", fifo, "--upstream", EVERYTHING], {
      env: { PATH: process.env["PATH"] ?? "", ...env },
      timeout: 60_000,
    }).then(
      () => ({ code: 0, stderr: "" }),
      (err: { code?: number; stderr?: string }) => ({ code: err.code, stderr: err.stderr ?? "" }),
    );
    expect(failed).toEqual({ code: 1, stderr: `acp: cannot read policy \`${fifo}\`: not a file\n` });
  }, 120_000);
});

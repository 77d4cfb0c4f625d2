import { createHash } from "node:crypto";
import { spawn } from "node:child_process";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";
import { runCli } from "./run.js";

/**
 * A running `acp serve` picks up an edited policy.yml as `acp proxy` does: the next decision after the edit
 * is the new file's, a file that does not validate leaves the last good policy in force (named on stderr at
 * FILE:LINE:COL, once), and both are in the verified audit chain with the policy version of every decision.
 */

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const ACP = join(ROOT, "packages/cli/bin/acp.js");

const ALLOWS =
  'version: "1"\ndefault_action: allow\nrules:\n  - id: echo-allowed\n    match: { tool: echo }\n    action: allow\n';
const DENIES =
  'version: "1"\ndefault_action: allow\nrules:\n  - id: echo-denied\n    match: { tool: echo }\n    action: deny\n';
const INVALID =
  'version: "1"\ndefault_action: allow\nrules:\n  - id: echo-allowed\n    match: { tool: echo }\n    action: alow\n';

const sha256 = (text: string): string => `sha256:${createHash("sha256").update(text).digest("hex")}`;

interface Decided {
  route: string;
  rule: string | null;
  policy_hash: string;
}

interface AuditLine {
  event_type: string;
  tool: string | null;
  decision: string | null;
  metadata: Record<string, unknown>;
}

describe("acp serve: an edited policy.yml is picked up while the service runs", () => {
  const root = tempRoot("serve-policy-reload");
  let env: Record<string, string> = {};
  let home = "";

  beforeAll(() => {
    if (!existsSync(join(ROOT, "packages/cli/dist/wiring/serve-policy.js"))) {
      throw new Error("build first: npx tsc -b packages/cli");
    }
    ({ home } = fixtureHome(root.dir));
    env = envFor(home);
    writeFileSync(join(home, "policy.yml"), ALLOWS);
  });

  afterAll(() => root.cleanup());

  it("decides with the new rule after an edit, keeps the last good policy over an invalid one, and audits both", async () => {
    const policy = join(home, "policy.yml");
    const child = spawn(process.execPath, [ACP, "serve", "--port", "0", "--json"], {
      env: { PATH: process.env["PATH"] ?? "", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    const url = await new Promise<string>((resolve, reject) => {
      let out = "";
      child.stdout.on("data", (chunk: Buffer) => {
        out += chunk.toString("utf8");
        const end = out.indexOf("\n}\n");
        if (end >= 0) resolve((JSON.parse(out.slice(out.indexOf("{"), end + 2)) as { url: string }).url);
      });
      void exited.then((code) => reject(new Error(`acp serve exited (${String(code)}): ${stderr}`)));
    });
    const decide = async (): Promise<Decided> => {
      const res = await fetch(`${url}/v1/decide`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ tool: "echo", arguments: { message: "hi" } }),
      });
      return ((await res.json()) as { decision: Decided }).decision;
    };
    /** Decides until `until` holds (the service looks at its file at most every 250 ms); bounded. */
    const decideUntil = async (until: (d: Decided) => boolean): Promise<Decided> => {
      for (let i = 0; i < 400; i++) {
        const decided = await decide();
        if (until(decided)) return decided;
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error("the service never decided as expected");
    };
    try {
      expect(await decide()).toEqual(
        expect.objectContaining({ route: "accept", rule: "policy:echo-allowed", policy_hash: sha256(ALLOWS) }),
      );

      writeFileSync(`${policy}.tmp`, DENIES);
      renameSync(`${policy}.tmp`, policy);
      expect(await decideUntil((d) => d.route !== "accept")).toMatchObject({
        route: "refuse",
        rule: "policy:echo-denied",
        policy_hash: sha256(DENIES),
      });
      expect(stderr).toContain(
        `acp serve: policy ${policy} changed: deciding with ${sha256(DENIES)} from now on (was ${sha256(ALLOWS)})`,
      );

      // the contract front end names the version too
      const checked = await fetch(`${url}/pre-tool-check`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: readFileSync(join(ROOT, "examples/policy-tour/send-email.contract.json"), "utf8"),
      });
      expect(((await checked.json()) as { decision: { policy_hash: string } }).decision.policy_hash).toBe(
        sha256(DENIES),
      );

      writeFileSync(policy, INVALID);
      await decideUntil(() => stderr.includes(`${policy}:6:13: while reading rule \`echo-allowed\``));
      expect(stderr).toContain(
        `acp serve: error: policy ${policy} changed but cannot be used, so ${sha256(DENIES)} stays in force:`,
      );
      for (let i = 0; i < 3; i++) expect(await decide()).toMatchObject({ route: "refuse", rule: "policy:echo-denied" });
      expect(stderr.split("changed but cannot be used").length - 1).toBe(1);
    } finally {
      child.kill("SIGTERM");
      await exited;
    }

    expect((await runCli(["audit", "verify"], { env })).code).toBe(0);
    const events = readFileSync(join(home, "audit.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as AuditLine);
    expect(events.filter((e) => e.event_type === "policy_reloaded").map((e) => e.metadata)).toEqual([
      { file: policy, policy_hash: sha256(DENIES), previous_policy_hash: sha256(ALLOWS) },
    ]);
    const refused = events.filter((e) => e.event_type === "policy_reload_refused");
    expect(refused.map((e) => e.metadata["refused_policy_hash"])).toEqual([sha256(INVALID)]);
    const evaluated = events.filter((e) => e.event_type === "policy_evaluated" && e.tool === "echo");
    expect(evaluated.length).toBeGreaterThan(4);
    expect(
      evaluated.every((e) => e.metadata["policy_hash"] === sha256(e.decision === "accept" ? ALLOWS : DENIES)),
    ).toBe(true);
  }, 120_000);
});

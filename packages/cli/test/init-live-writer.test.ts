/**
 * `acp init --force` while another process writes the home's audit log (an `acp proxy` an MCP client started,
 * `acp run`, `acp serve`): before, init replaced the keys and moved audit.jsonl aside under the live writer,
 * which went on signing with the old key (the next start then refused the log). Now init refuses
 * (`home_in_use`), naming the process and how to stop it, and changes nothing; a writer that was killed (its
 * holder file left behind) does not hold it up. The writer is a real second process.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { homePaths, openAuditLog } from "@acp/store";
import { runCli } from "./run.js";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";

const root = tempRoot("init-live-writer");
afterAll(root.cleanup);
let childScript = "";
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

const src = (path: string): string => fileURLToPath(new URL(`../../${path}`, import.meta.url));

beforeAll(async () => {
  childScript = join(root.dir, "audit-writer-child.mjs");
  await build({
    entryPoints: [fileURLToPath(new URL("./audit-writer-child.ts", import.meta.url))],
    outfile: childScript,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    // the audit writer alone: the store's SQLite and PostgreSQL parts are not needed (nor found from a temporary folder)
    alias: { "@acp/store": src("store/src/audit/index.ts"), "@acp/core": src("core/src/index.ts") },
    banner: { js: 'import { createRequire } from "node:module"; const require = createRequire(import.meta.url);' },
    logLevel: "error",
  });
});

/** Starts a second process writing `audit`, resolved once its writer is open. */
function startWriter(audit: string): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [childScript, audit], { stdio: ["pipe", "pipe", "inherit"] });
    children.push(child);
    child.on("error", reject);
    child.on("exit", (code) => reject(new Error(`the writer exited (${code}) before it opened the log`)));
    child.stdout.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("open")) resolve(child);
    });
  });
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once("exit", () => resolve());
  });
}

/** A home whose audit log another key signed (as an acp proxy before acp init did): --force moves it aside. */
async function homeWithForeignLog(): Promise<{ home: string; before: string[]; publicKey: string }> {
  const { home } = fixtureHome(root.dir, null);
  const p = homePaths(home);
  const log = await openAuditLog(p.audit, {
    clock: () => new Date(),
    signer: generateKeyPairSync("ed25519").privateKey,
  });
  await log.append({ event_type: "policy_evaluated", tool: "t", decision: "accept" });
  await log.close();
  return { home, before: readdirSync(home).sort(), publicKey: readFileSync(p.publicKey, "utf8") };
}

const force = ["init", "--force", "--no-passphrase"];

describe("acp init --force while another process writes the home's audit log", () => {
  it("refuses (home_in_use), naming the writer's pid and how to stop it, and changes nothing", async () => {
    const { home, before, publicKey } = await homeWithForeignLog();
    const p = homePaths(home);
    const writer = await startWriter(p.audit);
    const r = await runCli(force, { env: envFor(home, null) });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(`\`${home}\` is in use: pid ${writer.pid} writes its audit log`);
    expect(r.stderr).toContain("stop it (quit the MCP client that started acp proxy, or stop acp serve)");
    expect(r.stderr).toContain("(home_in_use)");
    // before the warning about an unencrypted key: nothing was about to be written
    expect(r.stderr).not.toContain("WARNING");
    expect(readFileSync(p.publicKey, "utf8")).toBe(publicKey);
    expect(existsSync(p.audit)).toBe(true);

    // the writer stops (its stdin ends, as a proxy's when its client quits): init goes ahead
    writer.stdin?.end();
    await exited(writer);
    expect(writer.exitCode).toBe(0);
    expect(readdirSync(home).sort()).toEqual(before);
    const ok = await runCli([...force, "--json"], { env: envFor(home, null) });
    expect(ok.code).toBe(0);
    expect((JSON.parse(ok.stdout) as { audit_moved_to: string }).audit_moved_to).toMatch(/audit\.jsonl\.before-init-/);
    expect(readFileSync(p.publicKey, "utf8")).not.toBe(publicKey);
  });

  it("is not held up by a writer that was killed, whose holder file is left behind", async () => {
    const { home, publicKey } = await homeWithForeignLog();
    const p = homePaths(home);
    const writer = await startWriter(p.audit);
    writer.kill("SIGKILL");
    await exited(writer);
    const left = readdirSync(home).filter((n) => n.startsWith(`audit.jsonl.lock.${writer.pid}.`));
    expect(left).toHaveLength(1); // the stale case is really exercised
    const r = await runCli([...force, "--json"], { env: envFor(home, null) });
    expect(r.stderr).toContain("moved it and its anchor to");
    expect(r.code).toBe(0);
    expect(readFileSync(p.publicKey, "utf8")).not.toBe(publicKey);
  });
});

/**
 * Two nodes as separate processes on one real PostgreSQL: node A (a child process) raises a consent
 * request and waits; node B (this process) decides it. A node killed with SIGKILL mid-wait loses nothing.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { createPostgresPendingConsentStore, openPostgresStore, type PostgresStore } from "../../src/index.js";
import { useTestDatabase } from "./test-database.js";

const root = fileURLToPath(new URL("../../../../", import.meta.url));
const viteNode = `${root}node_modules/.bin/vite-node`;
const script = fileURLToPath(new URL("./fixtures/consent-node.ts", import.meta.url));
const db = useTestDatabase();
const children: ChildProcess[] = [];
let nodeB: PostgresStore | undefined;

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
  await nodeB?.close();
});

interface NodeProcess {
  readonly child: ChildProcess;
  /** Resolves with the first stdout line that starts with `prefix`; rejects if the process exits first. */
  line(prefix: string): Promise<string>;
  exited(): Promise<number | null>;
}

function startNode(mode: "raise" | "resume", id: string): NodeProcess {
  if (!existsSync(viteNode))
    throw new Error(`${viteNode} is missing (it comes with vitest): cannot start a node process`);
  const child = spawn(viteNode, ["-c", `${root}vitest.config.ts`, script, "--", db.url, mode, id], {
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let out = "";
  let err = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const exit = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return {
    child,
    exited: () => exit,
    line: (prefix) =>
      new Promise<string>((resolve, reject) => {
        const check = (): void => {
          const found = out.split("\n").find((l) => l.startsWith(prefix));
          if (found !== undefined) resolve(found);
        };
        child.stdout.on("data", check);
        check();
        void exit.then((code) => {
          check();
          reject(new Error(`node process exited (${String(code)}) before printing \`${prefix}\`: ${err.trim()}`));
        });
      }),
  };
}

async function decideOnB(id: string, status: "approved" | "denied", answer: unknown): Promise<boolean> {
  nodeB ??= await openPostgresStore(db.url, { applicationName: "node-b-process-test" });
  return (await createPostgresPendingConsentStore(nodeB).decide(id, status, answer, Date.now())).ok;
}

describe("node processes on one PostgreSQL", () => {
  it("a request raised by node process A is approved through node B and completes on A", async () => {
    const a = startNode("raise", "cr_proc_ok");
    await a.line("waiting cr_proc_ok");
    expect(await decideOnB("cr_proc_ok", "approved", { by: "b" })).toBe(true);
    expect(await a.line("completed")).toBe('completed approved {"by":"b"}');
    expect(await a.exited()).toBe(0);
  });

  it("node A killed (SIGKILL) mid-wait loses nothing: decided meanwhile, it completes after a restart", async () => {
    const a1 = startNode("raise", "cr_proc_kill");
    await a1.line("waiting cr_proc_kill");
    a1.child.kill("SIGKILL");
    expect(await a1.exited()).toBeNull();
    expect(await decideOnB("cr_proc_kill", "denied", { reason: "not now" })).toBe(true);
    const a2 = startNode("resume", "cr_proc_kill");
    expect(await a2.line("completed")).toBe('completed denied {"reason":"not now"}');
    expect(await a2.exited()).toBe(0);
    expect(await decideOnB("cr_proc_kill", "approved", {})).toBe(false);
  });
});

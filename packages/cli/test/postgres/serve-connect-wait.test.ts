/**
 * `acp serve` started with its database (compose, Kubernetes) waits for it: a real PostgreSQL of this
 * test's own, stopped when the node starts and started once the node has said it waits, and the node comes
 * up on it; each retry is said on stderr. A wrong password is not waited for: the node stops at once (the
 * wait given is far longer than the test may run), saying why. Bad values of the flag and key stop it too.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { envFor, fixtureHome, tempRoot } from "../home-fixture.js";
import { runCli } from "../run.js";

const root = fileURLToPath(new URL("../../../../", import.meta.url));
const viteNode = `${root}node_modules/.bin/vite-node`;
const script = fileURLToPath(new URL("./fixtures/acp-process.ts", import.meta.url));
const pgScript = `${root}scripts/postgres.sh`;
const run = promisify(execFile);
const homes = tempRoot("serve-connect-wait");
const children: ChildProcess[] = [];
let dir = "";
let url = "";

/** Starts (or starts again, on its port) this test's own cluster; its URL. */
async function startCluster(): Promise<string> {
  const { stdout } = await run("bash", [pgScript, "start", dir], { timeout: 600_000, maxBuffer: 16 << 20 });
  return stdout.trim().split("\n").pop() ?? "";
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "acp-pg-late-"));
  url = await startCluster();
  // a role that must give its password (the rest of the cluster trusts loopback)
  const hba = join(dir, "data", "pg_hba.conf");
  writeFileSync(hba, `host all acp_pw 127.0.0.1/32 scram-sha-256\n${readFileSync(hba, "utf8")}`);
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query("CREATE ROLE acp_pw LOGIN PASSWORD 'right-password'");
  await admin.query("SELECT pg_reload_conf()");
  await admin.end();
  await run("bash", [pgScript, "stop", dir], { timeout: 60_000 });
}, 600_000);

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  if (dir !== "") await run("bash", [pgScript, "stop", dir], { timeout: 60_000 }).catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
  homes.cleanup();
}, 120_000);

interface Node {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  stderr(): string;
  /** Resolves once stderr holds `text`. */
  said(text: string): Promise<void>;
  /** Resolves with the `--json` start-up object once it listens. */
  ready: Promise<{ url: string; storage: { kind: string } }>;
}

function startNode(storageUrl: string, wait: string): Node {
  const { home } = fixtureHome(homes.dir);
  const child = spawn(
    viteNode,
    ["-c", `${root}vitest.config.ts`, script, "--", "serve", "--port", "0", "--json", "--storage-connect-wait", wait],
    {
      cwd: root,
      env: { ...process.env, ...envFor(home), ACP_STORAGE_URL: storageUrl },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  children.push(child);
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  let out = "";
  let err = "";
  const waiting: { text: string; resolve: () => void }[] = [];
  child.stderr.on("data", (chunk: Buffer) => {
    err += chunk.toString();
    for (const w of waiting.filter((w) => err.includes(w.text))) w.resolve();
  });
  const ready = new Promise<{ url: string; storage: { kind: string } }>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const start = out.indexOf("{\n");
      const end = out.indexOf("\n}\n", start);
      if (start >= 0 && end >= 0)
        resolve(JSON.parse(out.slice(start, end + 2)) as { url: string; storage: { kind: string } });
    });
    void exited.then((code) => reject(new Error(`acp serve exited (${String(code)}) before listening: ${err.trim()}`)));
  });
  ready.catch(() => undefined);
  return {
    child,
    exited,
    stderr: () => err,
    said: (text) =>
      new Promise<void>((resolve, reject) => {
        if (err.includes(text)) resolve();
        else waiting.push({ text, resolve });
        void exited.then((code) => reject(new Error(`acp serve exited (${String(code)}): ${err.trim()}`)));
      }),
    ready,
  };
}

describe("acp serve waits for a PostgreSQL started with it", () => {
  it("a node started before its database says it waits, each attempt, and comes up once the database runs", async () => {
    const node = startNode(url, "600");
    await node.said("is not accepting connections yet");
    expect(await startCluster()).toBe(url); // the same port: what the node was given
    const ready = await node.ready;
    expect(ready.storage.kind).toBe("postgres");
    expect((await fetch(`${ready.url}/healthz`)).status).toBe(200);
    const retries = node
      .stderr()
      .split("\n")
      .filter((l) => l.includes("is not accepting connections yet"));
    expect(retries.length).toBeGreaterThanOrEqual(1);
    expect(retries[0]).toMatch(
      new RegExp(
        `^acp serve: storage: ${url.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")} is not accepting connections yet \\(.*ECONNREFUSED.*\\): ` +
          "attempt 1, trying again in 0.5 s \\(waited .* of 600 s: --storage-connect-wait, storage.connect_wait\\)$",
      ),
    );
    node.child.kill("SIGTERM");
    await node.exited;
  }, 600_000);

  it("a wrong password stops the node at once, not waited for, saying the password was refused", async () => {
    await startCluster(); // running (the test before started it; idempotent)
    const wrong = new URL(url);
    wrong.username = "acp_pw";
    wrong.password = "wrong-password";
    const node = startNode(wrong.toString(), "3600");
    expect(await node.exited).toBe(1);
    const err = node.stderr();
    expect(err).toContain('password authentication failed for user "acp_pw"');
    expect(err).toContain("not retried: the user or password is refused");
    expect(err).not.toContain("is not accepting connections yet");
    expect(err).not.toContain("wrong-password");
  }, 600_000);

  it("refuses a flag or config value that is not seconds from 0 to 3600 (exit 2, exit 4)", async () => {
    const { home } = fixtureHome(homes.dir);
    const flag = await runCli(["serve", "--storage-connect-wait", "soon"], {
      env: { ...envFor(home), ACP_STORAGE_URL: url },
    });
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain("--storage-connect-wait: `soon` is not a number of seconds from 0 to 3600");
    appendFileSync(join(home, "config.yml"), "storage:\n  connect_wait: -5\n");
    const config = await runCli(["serve"], { env: { ...envFor(home), ACP_STORAGE_URL: url } });
    expect(config.code).toBe(4);
    expect(config.stderr).toContain("storage.connect_wait: `-5` is not a number of seconds from 0 to 3600");
  }, 60_000);
});

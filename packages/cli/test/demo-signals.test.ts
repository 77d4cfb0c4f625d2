import { execFile, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const ACP = join(ROOT, "packages/cli/bin/acp.js");
const HAS_PROC = existsSync("/proc/self/stat");

interface Demo {
  readonly child: ChildProcess;
  readonly tmp: string;
  readonly home: string;
  readonly stdout: () => string;
  readonly stderr: () => string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const sandboxes: string[] = [];

/** `acp demo` as a user runs it, with a private HOME, ACP_HOME and TMPDIR (where it makes its home). */
function startDemo(): Demo {
  const sandbox = mkdtempSync(join(tmpdir(), "acp-demo-signals-"));
  sandboxes.push(sandbox);
  const tmp = join(sandbox, "tmp");
  const home = join(sandbox, "home");
  mkdirSync(tmp);
  mkdirSync(home);
  const child = spawn(process.execPath, [ACP, "demo"], {
    cwd: ROOT,
    env: { PATH: process.env["PATH"] ?? "", CI: "true", HOME: home, ACP_HOME: join(home, ".acp"), TMPDIR: tmp },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  return { child, tmp, home, stdout: () => stdout, stderr: () => stderr, exited };
}

/** The demo's temporary home (`$TMPDIR/acp-demo-*`), once it holds a complete ACP home. */
function demoHome(tmp: string): string | undefined {
  const root = readdirSync(tmp).find((name) => name.startsWith("acp-demo-"));
  if (root === undefined) return undefined;
  return existsSync(join(tmp, root, "acp-home", "config.yml")) ? join(tmp, root) : undefined;
}

/** Every live process descending from `pid` (Linux /proc), zombies left out. */
function descendants(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, "utf8");
    } catch {
      continue; // ended while we looked
    }
    const [state, ppid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (state === "Z") continue;
    const children = parents.get(Number(ppid)) ?? [];
    children.push(Number(name));
    parents.set(Number(ppid), children);
  }
  const found: number[] = [];
  const walk = (p: number): void => {
    for (const c of parents.get(p) ?? []) {
      found.push(c);
      walk(c);
    }
  };
  walk(pid);
  return found;
}

function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0] !== "Z";
  } catch {
    return false;
  }
}

describe("acp demo stopped by a signal", () => {
  beforeAll(async () => {
    if (!existsSync(join(ROOT, "packages/cli/dist/demo/servers/mail-server.js"))) {
      await promisify(execFile)("npx", ["tsc", "-b", "packages/cli"], { cwd: ROOT }).catch(() => undefined);
    }
  }, 180_000);

  afterEach(() => {
    for (const dir of sandboxes.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("removes its temporary home on SIGTERM once the home is made, and exits 143", async () => {
    const demo = startDemo();
    let root: string | undefined;
    await vi.waitFor(
      () => {
        root = demoHome(demo.tmp);
        expect(root).toBeDefined();
      },
      { timeout: 60_000, interval: 10 },
    );
    demo.child.kill("SIGTERM");
    expect(await demo.exited).toEqual({ code: 143, signal: null });
    expect(existsSync(root as string)).toBe(false);
    expect(readdirSync(demo.tmp)).toEqual([]);
    expect(readdirSync(demo.home)).toEqual([]);
    expect(demo.stderr()).toContain("acp: demo stopped by SIGTERM: its temporary home is removed");
  }, 90_000);

  it.skipIf(!HAS_PROC)(
    "on SIGINT while `acp proxy` and its servers run, ends them all, removes its home and exits 130",
    async () => {
      const demo = startDemo();
      const pid = demo.child.pid as number;
      // run 2: the demo's `acp proxy` child and the two servers it started
      let running: number[] = [];
      await vi.waitFor(
        () => {
          expect(demo.stdout()).toContain("2. With ACP");
          running = descendants(pid);
          expect(running.length).toBeGreaterThanOrEqual(3);
        },
        { timeout: 60_000, interval: 10 },
      );
      const root = demoHome(demo.tmp);
      expect(root).toBeDefined();
      demo.child.kill("SIGINT");
      expect(await demo.exited).toEqual({ code: 130, signal: null });
      expect(demo.stdout()).not.toContain("With ACP it did not.");
      expect(running.filter(isAlive)).toEqual([]);
      expect(existsSync(root as string)).toBe(false);
      expect(readdirSync(demo.tmp)).toEqual([]);
      expect(readdirSync(demo.home)).toEqual([]);
    },
    90_000,
  );
});

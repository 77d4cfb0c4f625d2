/**
 * What the host makes after the sandbox started, and what the init leaves in the agent's own directories
 * (real namespaces, as root):
 * - a Unix socket a program outside creates in `$XDG_RUNTIME_DIR` while the agent runs (a D-Bus session bus,
 *   an ssh-agent, a rootless Docker started later) is out of reach: the runtime directory is covered whole
 *   with an empty tmpfs of the agent's own, where its own sockets work, also when it lies in the agent's
 *   (writable) working directory;
 * - the empty file the init binds over `/proc/keys` (and over the sockets it covers) cannot be changed by the
 *   agent, which is uid 0 and would otherwise own it: `/proc/keys` stays empty.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { planNamespace, runSandboxed } from "../../src/index.js";
import { runtimeDirCover } from "../../src/sandbox/covered-roots.js";
import { quietRun, scratchDir } from "./net-fixture.js";

// Runs inside: tampers with every file the init left in the covered directories, says it is ready, waits for
// the host's late socket, then tries it and a socket of its own in $XDG_RUNTIME_DIR.
const AGENT = `
const net = require("node:net");
const fs = require("node:fs");
const path = require("node:path");
const [out, raw] = process.argv.slice(1);
const paths = JSON.parse(raw);
const r = { tampered: [] };
const walk = (dir, depth) => {
  let entries = [];
  try { entries = fs.readdirSync(dir, { withFileTypes: true }); } catch { return; }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory() && depth > 0) walk(p, depth - 1);
    else if (e.isFile()) {
      try { fs.chmodSync(p, 0o666); fs.appendFileSync(p, "planted by the agent\\n"); r.tampered.push(p); } catch {}
    }
  }
};
for (const root of ["/run", "/tmp", "/var/tmp", "/dev/shm"]) walk(root, 2);
r.keys = fs.readFileSync("/proc/keys", "utf8");
const tryOne = (p) => new Promise((resolve) => {
  const s = net.connect(p);
  s.on("connect", () => { s.destroy(); resolve("connected"); });
  s.on("error", (e) => resolve(e.code));
});
(async () => {
  const own = net.createServer((s) => s.end());
  const listening = await new Promise((res) => {
    own.on("error", (e) => res(e.code));
    own.listen(path.join(process.env.XDG_RUNTIME_DIR, "own.sock"), () => res("listening"));
  });
  r.own = listening === "listening" ? await tryOne(path.join(process.env.XDG_RUNTIME_DIR, "own.sock")) : listening;
  own.close();
  fs.writeFileSync(paths.ready, "");
  while (!fs.existsSync(paths.go)) await new Promise((res) => setTimeout(res, 50));
  r.late = await tryOne(paths.late);
  fs.writeFileSync(out, JSON.stringify(r));
})();
`;

let work: { path: string; remove(): void };
const listeners: Server[] = [];
beforeAll(() => void (work = scratchDir("acp-sbx-late-")));
afterAll(() => {
  for (const s of listeners) s.close();
  work.remove();
});

async function listen(path: string): Promise<void> {
  const server = createServer((s) => {
    s.on("error", () => undefined);
    s.end("outside\n");
  });
  await new Promise<void>((resolve) => server.listen(path, () => resolve()));
  listeners.push(server);
}

describe.each(["netns", "userns"] as const)("isolation %s as root", (level) => {
  it.each([
    ["elsewhere", false],
    ["in the working directory", true],
  ] as const)(
    "a socket made in $XDG_RUNTIME_DIR (%s) after the start is out of reach, and the init's empty file stays empty",
    async (where, inCwd) => {
      const cwd = join(work.path, `cwd-${level}-${where.length}`);
      const runtime = inCwd ? join(cwd, ".run") : join(work.path, `runtime-${level}`);
      mkdirSync(cwd);
      mkdirSync(runtime, { mode: 0o700 });
      const paths = { ready: join(cwd, "ready"), go: join(cwd, "go"), late: join(runtime, "bus") };
      const out = join(cwd, "out.json");
      const run = runSandboxed(
        quietRun({
          argv: [process.execPath, "-e", AGENT, out, JSON.stringify(paths)],
          isolation: level,
          home: join(work.path, "acp-home"),
          env: { PATH: process.env["PATH"] ?? "", HOME: join(work.path, "home"), XDG_RUNTIME_DIR: runtime },
          cwd,
        }),
      );
      let ended = false;
      void run.finally(() => (ended = true));
      while (!existsSync(paths.ready) && !ended) await new Promise((res) => setTimeout(res, 50));
      // the host's program starts now, after the sandbox did
      await listen(paths.late);
      writeFileSync(paths.go, "");
      expect(await run).toEqual({ level, exitCode: 0 });
      const result = JSON.parse(readFileSync(out, "utf8")) as {
        tampered: string[];
        keys: string;
        own: string;
        late: string;
      };
      expect(result.late).toBe("ENOENT");
      expect(result.own).toBe("connected");
      expect(result.keys).toBe("");
      expect(result.tampered).toEqual([]);
      // the agent's own socket stayed in its own runtime directory; the host's is where it was
      expect(existsSync(join(runtime, "own.sock"))).toBe(false);
      expect(existsSync(paths.late)).toBe(true);
    },
  );
});

describe("runtimeDirCover", () => {
  it("covers $XDG_RUNTIME_DIR outside the covered roots, unless it holds or lies in what must stay", () => {
    const runtime = join(work.path, "unit-runtime");
    mkdirSync(join(runtime, "project"), { recursive: true });
    expect(runtimeDirCover(runtime, ["/run", "/tmp"], [])).toEqual({ path: runtime, mode: "0700" });
    // under /run it is covered with /run already; a path that is no directory, or none at all, is left alone
    expect(runtimeDirCover(runtime, [work.path], [])).toBeUndefined();
    expect(runtimeDirCover(join(runtime, "missing"), [], [])).toBeUndefined();
    expect(runtimeDirCover(undefined, [], [])).toBeUndefined();
    expect(runtimeDirCover("relative/run", [], [])).toBeUndefined();
    expect(runtimeDirCover("/", [], [])).toBeUndefined();
    // a home, bridge or program inside it, or it inside one: not covered
    expect(runtimeDirCover(runtime, [], [join(runtime, "project")])).toBeUndefined();
    expect(runtimeDirCover(runtime, [], [work.path])).toBeUndefined();
    // a working directory or --writable path inside it, or it itself: not covered; one it lies in: covered
    expect(runtimeDirCover(runtime, [], [], [join(runtime, "project")])).toBeUndefined();
    expect(runtimeDirCover(runtime, [], [], [runtime])).toBeUndefined();
    expect(runtimeDirCover(runtime, [], [], [work.path])).toEqual({ path: runtime, mode: "0700" });
    // one that holds a covered root (XDG_RUNTIME_DIR=/var holds /var/tmp) is not covered
    expect(runtimeDirCover(work.path, [runtime], [])).toBeUndefined();
  });

  it("covers it in the working directory, but not under a directory pinned on the way to ACP's home", () => {
    const cwd = join(work.path, "plan-cwd");
    const home = join(cwd, "state", "acp");
    for (const dir of [home, join(cwd, ".run"), join(cwd, "state", "run")]) mkdirSync(dir, { recursive: true });
    const plan = (runtime: string) =>
      planNamespace({
        argv: ["/bin/true"],
        env: { XDG_RUNTIME_DIR: runtime },
        cwd,
        home,
        bridgeDir: join(work.path, "plan-bridge"),
        setpriv: "/usr/bin/setpriv",
        ports: { mcp: 1, egress: 2 },
      });
    expect(plan(join(cwd, ".run")).cover).toContainEqual({ path: join(cwd, ".run"), mode: "0700" });
    // `state` is bound onto itself (not recursively) so that it cannot be renamed: that would hide the cover
    const pinned = plan(join(cwd, "state", "run"));
    expect(pinned.pinned).toEqual([join(cwd, "state")]);
    expect(pinned.cover.map((c) => c.path)).not.toContain(join(cwd, "state", "run"));
  });
});

/**
 * The sandbox caps the agent's processes (`maxProcesses`, `acp run --max-processes`): an agent that starts
 * more than the cap is refused the rest, the host keeps going, and the agent cannot lift the cap. As root
 * (this machine) the cap is a pids cgroup: the kernel never applies RLIMIT_NPROC to uid 0, which the agent is
 * under netns (and under userns started by root). As another user (userns), the cap is RLIMIT_NPROC, which
 * counts the processes of uid 0 in the sandbox's own user namespace.
 */
import { spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runSandboxed } from "../../src/index.js";
import { quietRun, scratchDir } from "./net-fixture.js";

let work: { path: string; remove(): void };

beforeAll(() => {
  work = scratchDir("acp-sbx-nproc-");
});

afterAll(() => {
  work?.remove();
});

const CAP = 48;
const TRIES = 120;

// starts TRIES `sleep` children (all at once, none waited for), then tries to lift its cgroup's cap; writes
// how many started and what lifting the cap did. Synchronous file calls only: a refused thread would end Node.
const AGENT = `
const fs = require("node:fs");
const { spawn } = require("node:child_process");
let started = 0;
const errors = new Set();
for (let i = 0; i < ${TRIES}; i++) {
  const child = spawn("sleep", ["30"], { stdio: "ignore" });
  child.on("error", (err) => errors.add(err.code));
  if (child.pid !== undefined) started++;
}
let lift = "no pids cgroup";
const line = fs.readFileSync("/proc/self/cgroup", "utf8").split("\\n").find((l) => l.split(":")[1] === "pids");
if (line) {
  try {
    fs.writeFileSync("/sys/fs/cgroup/pids" + line.split(":")[2] + "/pids.max", "max");
    lift = "lifted";
  } catch (err) {
    lift = err.code;
  }
}
setImmediate(() => {
  fs.writeFileSync(process.argv[1], JSON.stringify({ started, errors: [...errors], lift }));
  process.exit(0);
});
`;

function ownRunCgroups(): string[] {
  const dir = "/sys/fs/cgroup/pids";
  return existsSync(dir) ? readdirSync(dir).filter((n) => n.startsWith(`acp-run-${process.pid}-`)) : [];
}

describe.each(["netns", "userns"] as const)("isolation %s as root", (level) => {
  it("an agent starting more processes than the cap gets no more than the cap, and cannot lift it", async () => {
    const out = join(work.path, `nproc-${level}.json`);
    const lines: string[] = [];
    const events: { type: string; fields: Record<string, unknown> }[] = [];
    const result = await runSandboxed(
      quietRun({
        argv: [process.execPath, "-e", AGENT, out],
        isolation: level,
        home: join(work.path, "home"),
        env: { PATH: process.env["PATH"] },
        cwd: work.path,
        maxProcesses: CAP,
        log: (line) => void lines.push(line),
        audit: { record: (type, fields) => void events.push({ type, fields }) },
      }),
    );
    expect(result.exitCode).toBe(0);
    const seen = JSON.parse(readFileSync(out, "utf8")) as { started: number; errors: string[]; lift: string };
    expect(seen.started).toBeGreaterThan(0);
    expect(seen.started).toBeLessThan(CAP);
    expect(seen.errors).toEqual(["EAGAIN"]);
    expect(seen.lift).toBe("EROFS");
    expect(lines.join("\n")).toContain(`capabilities dropped; at most ${CAP} processes; MCP at`);
    expect(lines.join("\n")).toContain(`the agent reached its cap of ${CAP} processes`);
    expect(events.find((e) => e.type === "sandbox_started")?.fields["max_processes"]).toBe(CAP);
    expect(events.find((e) => e.type === "sandbox_exited")?.fields["processes_refused"]).toBeGreaterThan(0);
    // the host is fine, and the run's cgroup is gone
    expect(spawnSync("true").status).toBe(0);
    expect(ownRunCgroups()).toEqual([]);
  });

  it("the default cap is applied when none is given, and an agent under it is not refused anything", async () => {
    const out = join(work.path, `nproc-default-${level}.json`);
    const events: { type: string; fields: Record<string, unknown> }[] = [];
    const result = await runSandboxed(
      quietRun({
        argv: [process.execPath, "-e", AGENT, out],
        isolation: level,
        home: join(work.path, "home"),
        env: { PATH: process.env["PATH"] },
        cwd: work.path,
        audit: { record: (type, fields) => void events.push({ type, fields }) },
      }),
    );
    expect(result.exitCode).toBe(0);
    const seen = JSON.parse(readFileSync(out, "utf8")) as { started: number; lift: string };
    expect(seen.started).toBe(TRIES);
    expect(seen.lift).toBe("EROFS");
    expect(events.find((e) => e.type === "sandbox_started")?.fields["max_processes"]).toBe(4096);
    expect(events.find((e) => e.type === "sandbox_exited")?.fields["processes_refused"]).toBe(0);
  });
});

describe("leftovers", () => {
  it("the empty cgroup of an earlier run whose acp was killed is removed by the next run", async () => {
    const gone = spawnSync("true").pid ?? 0;
    const stale = `/sys/fs/cgroup/pids/acp-run-${gone}-0badc0de`;
    mkdirSync(stale);
    try {
      const result = await runSandboxed(
        quietRun({
          argv: ["true"],
          isolation: "netns",
          home: join(work.path, "home"),
          env: { PATH: process.env["PATH"] },
          cwd: work.path,
          maxProcesses: CAP,
        }),
      );
      expect(result.exitCode).toBe(0);
      expect(existsSync(stale)).toBe(false);
    } finally {
      if (existsSync(stale)) rmdirSync(stale);
    }
  });
});

describe("isolation userns as another user", () => {
  it("an agent starting more processes than the cap gets no more than the cap (RLIMIT_NPROC)", () => {
    const NOBODY = 65534;
    const dir = scratchDir("acp-sbx-nproc-user-", NOBODY);
    try {
      const out = join(dir.path, "nproc.json");
      const index = resolve(fileURLToPath(import.meta.url), "../../../src/index.ts");
      const script = join(dir.path, "run.ts");
      writeFileSync(
        script,
        `import { runSandboxed } from ${JSON.stringify(index)};
const events = [];
const lines = [];
const result = await runSandboxed({
  argv: ${JSON.stringify([process.execPath, "-e", AGENT, out])},
  isolation: "userns",
  home: ${JSON.stringify(join(dir.path, "home"))},
  env: { PATH: process.env.PATH },
  cwd: ${JSON.stringify(dir.path)},
  maxProcesses: ${CAP},
  mcpTarget: { host: "127.0.0.1", port: 9 },
  egress: { allow: [], broker: { ask: () => Promise.resolve({ kind: "expired" }) } },
  audit: { record: (type, fields) => void events.push({ type, fields }) },
  log: (line) => void lines.push(line),
  signals: { on: () => undefined, off: () => undefined },
});
process.stdout.write(JSON.stringify({ result, events, lines }));
`,
      );
      chownSync(script, NOBODY, NOBODY);
      const viteNode = resolve(fileURLToPath(import.meta.url), "../../../../../node_modules/.bin/vite-node");
      const r = spawnSync(
        "setpriv",
        ["--reuid", String(NOBODY), "--regid", String(NOBODY), "--clear-groups", "--", viteNode, script],
        { encoding: "utf8", cwd: dir.path, env: { PATH: process.env["PATH"], HOME: dir.path }, timeout: 120_000 },
      );
      expect(r.status, r.stderr).toBe(0);
      const ran = JSON.parse(r.stdout.slice(r.stdout.indexOf("{"))) as {
        result: { level: string; exitCode: number };
        events: { type: string; fields: Record<string, unknown> }[];
        lines: string[];
      };
      expect(ran.result).toEqual({ level: "userns", exitCode: 0 });
      expect(ran.events.find((e) => e.type === "sandbox_started")?.fields["max_processes"]).toBe(CAP);
      expect(ran.lines.join("\n")).not.toContain("not capped");
      const seen = JSON.parse(readFileSync(out, "utf8")) as { started: number; errors: string[] };
      expect(seen.started).toBeGreaterThan(0);
      expect(seen.started).toBeLessThan(CAP);
      expect(seen.errors).toEqual(["EAGAIN"]);
      expect(spawnSync("true").status).toBe(0);
    } finally {
      dir.remove();
    }
  });
});

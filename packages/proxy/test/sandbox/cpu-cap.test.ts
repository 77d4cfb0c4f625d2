/**
 * The sandbox caps the agent's CPU time when asked (`maxCpu`, `acp run --max-cpu`): a CPU cgroup (v1's
 * `cpu.cfs_quota_us` on this machine, v2's `cpu.max` where the controller is handed down) whose quota the
 * agent's own cgroup holds while it runs, which the kernel enforces (the agent, burning CPU, is throttled:
 * `nr_throttled` in its cgroup's `cpu.stat` rises), which the agent cannot lift, and which acp reports and
 * removes after the run. No timing is measured: the quota file and the kernel's throttle count are what is
 * asserted. Without a cap asked for, no CPU cgroup is made. As root (this machine), where the cpu cgroup is
 * writable; as another user, where it is not, a cap asked for is refused.
 */
import { spawnSync } from "node:child_process";
import { chownSync, existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cpuQuota, createCpuCgroup, formatCpuCount, parseCpuCount, runSandboxed } from "../../src/index.js";
import { quietRun, scratchDir } from "./net-fixture.js";

let work: { path: string; remove(): void };

beforeAll(() => {
  work = scratchDir("acp-sbx-cpu-");
});

afterAll(() => {
  work?.remove();
});

// Reads its own cgroup of the cpu hierarchy (v1 here), burns CPU until the kernel has throttled that cgroup at
// least once (bounded by a count of rounds, not by a clock), tries to lift the quota, and writes what it saw.
const AGENT = `
const fs = require("node:fs");
const line = fs.readFileSync("/proc/self/cgroup", "utf8").split("\\n").find((l) => l.split(":")[1].split(",").includes("cpu"));
const dir = "/sys/fs/cgroup/cpu" + (line ? line.split(":")[2] : "/");
const read = (file) => { try { return fs.readFileSync(dir + "/" + file, "utf8").trim(); } catch (err) { return err.code; } };
const throttled = () => Number((/^nr_throttled (\\d+)/m.exec(read("cpu.stat")) || [])[1] || 0);
const burn = process.argv[2] === "burn";
let rounds = 0;
let sink = 0;
while (burn && throttled() === 0 && rounds < 20000) {
  for (let i = 0; i < 200000; i++) sink += i % 7;
  rounds++;
}
let lift;
try {
  fs.writeFileSync(dir + "/cpu.cfs_quota_us", "-1");
  lift = "lifted";
} catch (err) {
  lift = err.code;
}
fs.writeFileSync(process.argv[1], JSON.stringify({
  cgroup: line ? line.split(":")[2] : null,
  quota: read("cpu.cfs_quota_us"),
  period: read("cpu.cfs_period_us"),
  throttled: throttled(),
  lift,
  sink: sink > 0,
}));
`;

interface Seen {
  cgroup: string | null;
  quota: string;
  period: string;
  throttled: number;
  lift: string;
}

/** The cpu cgroups this process made and left behind (none once each run is over). */
function ownRunCgroups(): string[] {
  const dir = "/sys/fs/cgroup/cpu";
  return existsSync(dir) ? readdirSync(dir).filter((n) => n.startsWith(`acp-run-${process.pid}-`)) : [];
}

describe("parseCpuCount", () => {
  it("takes a decimal number of CPUs from 0.01 to 4096; refuses anything else", () => {
    expect(parseCpuCount("1.5")).toBe(1.5);
    expect(parseCpuCount("2")).toBe(2);
    expect(parseCpuCount("0.2")).toBe(0.2);
    expect(parseCpuCount(".5")).toBe(0.5);
    for (const bad of ["", "0", "0.001", "-1", "1e3", "1,5", "2 cpus", "Infinity", "NaN", "5000"]) {
      expect(parseCpuCount(bad), bad).toBeUndefined();
    }
    expect(cpuQuota(0.2)).toBe(20_000);
    expect(cpuQuota(1.5)).toBe(150_000);
    expect(formatCpuCount(0.2)).toBe("0.2 CPUs");
    expect(formatCpuCount(1)).toBe("1 CPU");
  });
});

describe("createCpuCgroup", () => {
  it("makes a cpu cgroup here (as root) holding the quota, which the run's cleanup removes", async () => {
    const cgroup = createCpuCgroup(0.2, []);
    expect(cgroup).not.toBeNull();
    expect(ownRunCgroups()).toHaveLength(1);
    expect(readFileSync(join(cgroup?.path ?? "", "cpu.cfs_quota_us"), "utf8").trim()).toBe("20000");
    expect(readFileSync(join(cgroup?.path ?? "", "cpu.cfs_period_us"), "utf8").trim()).toBe("100000");
    expect(cgroup?.throttled()).toBe(0);
    await cgroup?.remove();
    expect(ownRunCgroups()).toEqual([]);
  });
});

describe.each(["netns", "userns"] as const)("isolation %s as root", (level) => {
  it("an agent burning CPU under --max-cpu 0.2 runs in a cgroup holding that quota, is throttled, and cannot lift it", async () => {
    const out = join(work.path, `cpu-${level}.json`);
    const lines: string[] = [];
    const events: [string, Record<string, unknown>][] = [];
    const result = await runSandboxed(
      quietRun({
        argv: [process.execPath, "-e", AGENT, out, "burn"],
        isolation: level,
        home: join(work.path, "home"),
        env: { PATH: process.env["PATH"] },
        cwd: work.path,
        maxCpu: 0.2,
        log: (line) => void lines.push(line),
        audit: { record: (type, fields) => void events.push([type, fields]) },
      }),
    );
    expect(result.exitCode).toBe(0);
    const seen = JSON.parse(readFileSync(out, "utf8")) as Seen;
    expect(seen.cgroup).toMatch(new RegExp(`^/acp-run-${process.pid}-[0-9a-f]+$`));
    expect(seen.quota).toBe("20000");
    expect(seen.period).toBe("100000");
    expect(seen.throttled).toBeGreaterThan(0);
    expect(seen.lift).toBe("EROFS");
    expect(lines.join("\n")).toContain("the agent reached its CPU cap of 0.2 CPUs");
    expect(events.find(([t]) => t === "sandbox_started")?.[1]).toMatchObject({ max_cpu: 0.2 });
    expect(events.find(([t]) => t === "sandbox_exited")?.[1]["cpu_throttled"]).toBeGreaterThan(0);
    expect(ownRunCgroups()).toEqual([]);
  });

  it("without a cap asked for, no cpu cgroup is made and nothing is said", async () => {
    const out = join(work.path, `cpu-none-${level}.json`);
    const lines: string[] = [];
    const events: [string, Record<string, unknown>][] = [];
    const result = await runSandboxed(
      quietRun({
        argv: [process.execPath, "-e", AGENT, out],
        isolation: level,
        home: join(work.path, "home"),
        env: { PATH: process.env["PATH"] },
        cwd: work.path,
        log: (line) => void lines.push(line),
        audit: { record: (type, fields) => void events.push([type, fields]) },
      }),
    );
    expect(result.exitCode).toBe(0);
    const seen = JSON.parse(readFileSync(out, "utf8")) as Seen;
    expect(seen.cgroup ?? "").not.toContain("acp-run-");
    expect(lines.join("\n")).not.toContain("CPU");
    expect(events.find(([t]) => t === "sandbox_started")?.[1]).toMatchObject({ max_cpu: null });
    expect(events.find(([t]) => t === "sandbox_exited")?.[1]).not.toHaveProperty("cpu_throttled");
  });
});

describe("a cap that cannot be applied", () => {
  it("a CPU cap below 0.01 is refused before anything starts", async () => {
    const events: string[] = [];
    await expect(
      runSandboxed(
        quietRun({
          argv: ["true"],
          isolation: "netns",
          home: join(work.path, "home"),
          env: { PATH: process.env["PATH"] },
          cwd: work.path,
          maxCpu: 0.001,
          audit: { record: (type) => void events.push(type) },
        }),
      ),
    ).rejects.toMatchObject({ code: "sandbox_setup_failed" });
    expect(events).toEqual([]);
  });

  it("as another user, where no cpu cgroup can be made, --max-cpu is refused (sandbox_unavailable) and nothing starts", () => {
    const NOBODY = 65534;
    const dir = scratchDir("acp-sbx-cpu-user-", NOBODY);
    try {
      const out = join(dir.path, "ran.txt");
      const index = resolve(fileURLToPath(import.meta.url), "../../../src/index.ts");
      const script = join(dir.path, "run.ts");
      writeFileSync(
        script,
        `import { runSandboxed } from ${JSON.stringify(index)};
const events = [];
try {
  await runSandboxed({
    argv: ["/bin/sh", "-c", "echo ran > ${out}"],
    isolation: "userns",
    home: ${JSON.stringify(join(dir.path, "home"))},
    env: { PATH: process.env.PATH },
    cwd: ${JSON.stringify(dir.path)},
    maxCpu: 0.5,
    mcpTarget: { host: "127.0.0.1", port: 9 },
    egress: { allow: [], broker: { ask: () => Promise.resolve({ kind: "expired" }) } },
    audit: { record: (type) => void events.push(type) },
    log: () => undefined,
    signals: { on: () => undefined, off: () => undefined },
  });
  process.stdout.write(JSON.stringify({ ran: true, events }));
} catch (err) {
  process.stdout.write(JSON.stringify({ code: err.code, message: err.message, events }));
}
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
        code?: string;
        message?: string;
        events: string[];
      };
      expect(ran.code).toBe("sandbox_unavailable");
      expect(ran.message).toContain("cannot cap the agent's CPU time at 0.5 CPUs");
      expect(ran.events).toEqual([]);
      expect(existsSync(out)).toBe(false);
    } finally {
      dir.remove();
    }
  });
});

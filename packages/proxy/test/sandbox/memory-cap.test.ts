/**
 * The sandbox caps the agent's memory (`maxMemory`, `acp run --max-memory`): an agent that allocates past
 * the cap is killed by the kernel (a memory cgroup: v1's `memory.limit_in_bytes` on this machine, v2's
 * `memory.max` where the controller is handed down), acp says so, and `sandbox_exited` counts the kill. An
 * agent under the cap runs as before. As root (this machine), where the memory cgroup is writable.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMemoryCgroup, formatMemorySize, parseMemorySize, runSandboxed } from "../../src/index.js";
import { quietRun, scratchDir } from "./net-fixture.js";

const CAP = 64 * 1024 * 1024;
// 256 MiB, touched (a string of that many bytes), then a line saying it got there
const ALLOCATE = 'my $x = "a" x (256 * 1024 * 1024); print "allocated\\n";';

let work: { path: string; remove(): void };

beforeAll(() => {
  work = scratchDir("acp-sbx-mem-");
});

afterAll(() => {
  work?.remove();
});

describe("parseMemorySize", () => {
  it("takes bytes and K/M/G/T (powers of 1024, with or without iB); refuses anything else", () => {
    expect(parseMemorySize("67108864")).toBe(CAP);
    expect(parseMemorySize("64M")).toBe(CAP);
    expect(parseMemorySize("64MiB")).toBe(CAP);
    expect(parseMemorySize("4g")).toBe(4 * 1024 ** 3);
    for (const bad of ["", "64X", "-1", "1.5G", "M"]) expect(parseMemorySize(bad)).toBeUndefined();
    expect(formatMemorySize(CAP)).toBe("64 MiB");
  });
});

/** The memory cgroups this process made and left behind (none once each run is over). */
function ownRunCgroups(): string[] {
  const line = readFileSync("/proc/self/cgroup", "utf8")
    .split("\n")
    .find((l) => l.split(":")[1]?.split(",").includes("memory"));
  const dir = line === undefined ? "/sys/fs/cgroup" : join("/sys/fs/cgroup/memory", line.split(":")[2] ?? "");
  return existsSync(dir) ? readdirSync(dir).filter((n) => n.startsWith(`acp-run-${process.pid}-`)) : [];
}

describe("createMemoryCgroup", () => {
  it("makes a memory cgroup here (as root), which the run's cleanup removes", async () => {
    const cgroup = createMemoryCgroup(CAP, null);
    expect(cgroup).not.toBeNull();
    expect(ownRunCgroups()).toHaveLength(1);
    await cgroup?.remove();
    expect(ownRunCgroups()).toEqual([]);
  });
});

describe.each(["netns", "userns"] as const)("isolation %s as root", (level) => {
  it("an agent allocating past the cap is killed, and acp reports it", async () => {
    const lines: string[] = [];
    const events: [string, Record<string, unknown>][] = [];
    const out = join(work.path, `out-${level}.txt`);
    const options = quietRun({
      argv: ["/bin/sh", "-c", `perl -e '${ALLOCATE}' > ${out}`],
      isolation: level,
      home: join(work.path, "home"),
      env: { PATH: process.env["PATH"] },
      cwd: work.path,
      maxMemory: CAP,
      log: (line) => lines.push(line),
      audit: { record: (type, fields) => void events.push([type, fields]) },
    });
    const result = await runSandboxed(options);
    expect(result.exitCode).not.toBe(0);
    expect(readFileSync(out, "utf8")).toBe("");
    expect(lines.some((l) => l.includes("reached its memory cap of 64 MiB"))).toBe(true);
    expect(events.find(([t]) => t === "sandbox_started")?.[1]).toMatchObject({ max_memory: CAP });
    const exited = events.find(([t]) => t === "sandbox_exited")?.[1];
    expect(exited?.["oom_kills"]).toBeGreaterThanOrEqual(1);
    expect(ownRunCgroups()).toEqual([]);
  });

  it("an agent under the cap runs as before", async () => {
    const out = join(work.path, `small-${level}.txt`);
    const options = quietRun({
      argv: ["/bin/sh", "-c", `perl -e 'my $x = "a" x (8 * 1024 * 1024); print "allocated\\n";' > ${out}`],
      isolation: level,
      home: join(work.path, "home"),
      env: { PATH: process.env["PATH"] },
      cwd: work.path,
      maxMemory: CAP,
    });
    expect(await runSandboxed(options)).toEqual({ level, exitCode: 0 });
    expect(readFileSync(out, "utf8")).toBe("allocated\n");
  });
});

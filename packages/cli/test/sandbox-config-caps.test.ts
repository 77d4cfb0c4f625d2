/**
 * The caps of `acp run`'s sandbox set in the config file (`sandbox.max_processes`, `sandbox.max_memory`,
 * `sandbox.max_cpu`):
 * read and checked as `acp run` reads them (a bad value names the key at `FILE:LINE:COL`, exit 4), and shown by
 * `acp doctor` as the caps a run would apply, each value or default said as such.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CliError } from "../src/exit-codes.js";
import { readConfigFile } from "../src/wiring/config-file.js";
import { sandboxCaps } from "../src/wiring/config-in-use.js";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";
import { runCli } from "./run.js";

const root = tempRoot("sandbox-config-caps");
afterAll(root.cleanup);
let n = 0;

function configFile(text: string): string {
  const path = join(root.dir, `config-${++n}.yml`);
  writeFileSync(path, text);
  return path;
}

function capsOf(text: string): ReturnType<typeof sandboxCaps> | { code: number; lines: string[] } {
  try {
    return sandboxCaps(readConfigFile(configFile(text), true));
  } catch (err) {
    if (err instanceof CliError) return { code: err.exitCode, lines: err.message.split("\n") };
    throw err;
  }
}

interface Check {
  status: string;
  name: string;
  detail: string;
}

async function doctorChecks(config: string): Promise<{ code: number; checks: Check[] }> {
  const { home } = fixtureHome(root.dir);
  const r = await runCli(["doctor", "--json", "--config", config], { env: envFor(home) });
  return { code: r.code, checks: (JSON.parse(r.stdout) as { checks: Check[] }).checks };
}

describe("sandbox.max_memory", () => {
  it("takes bytes or a size with K, M, G or T; absent is the default", () => {
    expect(capsOf('version: "1"\nsandbox:\n  max_memory: 2G\n')).toEqual({
      maxProcesses: undefined,
      maxMemory: 2 * 1024 ** 3,
      maxCpu: undefined,
    });
    expect(capsOf('version: "1"\nsandbox:\n  max_memory: 67108864\n')).toMatchObject({ maxMemory: 64 * 1024 ** 2 });
    expect(capsOf('version: "1"\nsandbox:\n  max_memory: "512 MiB"\n')).toMatchObject({ maxMemory: 512 * 1024 ** 2 });
    expect(capsOf('version: "1"\nsandbox:\n  allow_egress: []\n')).toEqual({
      maxProcesses: undefined,
      maxMemory: undefined,
      maxCpu: undefined,
    });
    expect(capsOf('version: "1"\n')).toEqual({ maxProcesses: undefined, maxMemory: undefined, maxCpu: undefined });
  });

  it("refuses what is no size of at least 32 MiB, naming the key at FILE:LINE:COL (exit 4)", () => {
    for (const bad of ["1M", "lots", "1.5G", "-1", "true", "[2G]", "33554431"]) {
      const got = capsOf(`version: "1"\nsandbox:\n  max_memory: ${bad}\n`);
      expect(got, bad).toMatchObject({ code: 4 });
      const lines = (got as { lines: string[] }).lines;
      expect(lines, bad).toHaveLength(1);
      expect(lines[0], bad).toMatch(
        /:3:15: `sandbox\.max_memory` must be a size of at least 32 MiB \(bytes, or a whole number with K, M, G or T, e\.g\. 2G\), not /,
      );
    }
  });
});

describe("sandbox.max_cpu", () => {
  it("takes a number of CPUs (or one written as a string); absent is no cap", () => {
    expect(capsOf('version: "1"\nsandbox:\n  max_cpu: 1.5\n')).toMatchObject({ maxCpu: 1.5 });
    expect(capsOf('version: "1"\nsandbox:\n  max_cpu: 2\n')).toMatchObject({ maxCpu: 2 });
    expect(capsOf('version: "1"\nsandbox:\n  max_cpu: "0.25"\n')).toMatchObject({ maxCpu: 0.25 });
    expect(capsOf('version: "1"\nsandbox:\n  max_processes: 8\n')).toMatchObject({ maxCpu: undefined });
  });

  it("refuses what is no number of CPUs from 0.01 to 4096, naming the key at FILE:LINE:COL (exit 4)", () => {
    for (const bad of ["0", "0.001", "-1", "lots", "true", "1e9", "[1]", "5000"]) {
      const got = capsOf(`version: "1"\nsandbox:\n  max_cpu: ${bad}\n`);
      expect(got, bad).toMatchObject({ code: 4 });
      const lines = (got as { lines: string[] }).lines;
      expect(lines, bad).toHaveLength(1);
      expect(lines[0], bad).toMatch(
        /:3:12: `sandbox\.max_cpu` must be a number of CPUs from 0\.01 to 4096 \(e\.g\. 1\.5\), not /,
      );
    }
  });
});

describe("acp doctor: sandbox caps", () => {
  it("says the caps a run applies: the defaults, then each key's value", async () => {
    const plain = await doctorChecks(configFile('version: "1"\n'));
    expect(plain.checks.find((c) => c.name === "sandbox caps")).toEqual({
      status: "ok",
      name: "sandbox caps",
      detail:
        "acp run caps the sandbox at 4096 processes (default), 4 GiB of memory (default), no cap on CPU time (default); --max-processes, --max-memory and --max-cpu override",
    });
    const set = await doctorChecks(
      configFile('version: "1"\nsandbox:\n  max_processes: 300\n  max_memory: 2G\n  max_cpu: 1.5\n'),
    );
    expect(set.checks.find((c) => c.name === "sandbox caps")?.detail).toBe(
      "acp run caps the sandbox at 300 processes (sandbox.max_processes), 2 GiB of memory (sandbox.max_memory), 1.5 CPUs of CPU time (sandbox.max_cpu); --max-processes, --max-memory and --max-cpu override",
    );
  });

  it("fails the sandbox check on a bad max_memory, as acp run would refuse it, and shows no caps", async () => {
    const path = configFile('version: "1"\nsandbox:\n  max_memory: 1M\n');
    const got = await doctorChecks(path);
    expect(got.code).toBe(1);
    expect(got.checks.filter((c) => c.status === "fail")).toEqual([
      {
        status: "fail",
        name: "sandbox",
        detail: `${path}:3:15: \`sandbox.max_memory\` must be a size of at least 32 MiB (bytes, or a whole number with K, M, G or T, e.g. 2G), not "1M"`,
      },
    ]);
    expect(got.checks.find((c) => c.name === "sandbox caps")).toBeUndefined();
  });
});

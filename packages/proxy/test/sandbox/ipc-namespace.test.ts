/**
 * The host's System V IPC objects are out of the agent's reach, with real namespaces: a shared memory segment
 * the host made (as a display's MIT-SHM image or a database's) is not in the agent's IPC namespace.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runSandboxed } from "../../src/index.js";
import { quietRun, scratchDir } from "./net-fixture.js";

let work: { path: string; remove(): void };
let segment: string;

beforeAll(() => {
  work = scratchDir("acp-sbx-ipc-");
  // readable and writable by everyone, owned by root: under netns the agent is uid 0 too
  const made = spawnSync("ipcmk", ["-M", "4096", "-p", "0666"], { encoding: "utf8" });
  const id = /(\d+)\s*$/.exec(made.stdout.trim());
  if (made.status !== 0 || id === null) throw new Error(`ipcmk: ${made.stderr}`);
  segment = id[1] ?? "";
});

afterAll(() => {
  if (segment !== undefined) spawnSync("ipcrm", ["-m", segment]);
  work?.remove();
});

// lists the shared memory segments of its IPC namespace (their ids), as ipcs -m does
const AGENT = `
const fs = require("node:fs");
const rows = fs.readFileSync("/proc/sysvipc/shm", "utf8").trim().split("\\n").slice(1);
fs.writeFileSync(process.argv[1], JSON.stringify(rows.map((r) => r.trim().split(/\\s+/)[1])));
`;

describe.each(["netns", "userns"] as const)("isolation %s", (level) => {
  it("the agent does not see the host's shared memory segments", async () => {
    const out = join(work.path, `shm-${level}.json`);
    const result = await runSandboxed(
      quietRun({
        argv: [process.execPath, "-e", AGENT, out],
        isolation: level,
        home: join(work.path, "home"),
        env: { PATH: process.env["PATH"] },
        cwd: work.path,
      }),
    );
    expect(result.exitCode).toBe(0);
    const hostIds = readFileSync("/proc/sysvipc/shm", "utf8");
    expect(hostIds).toContain(` ${segment} `);
    expect(JSON.parse(readFileSync(out, "utf8"))).not.toContain(segment);
  });
});

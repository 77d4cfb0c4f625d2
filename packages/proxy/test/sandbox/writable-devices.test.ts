/**
 * The paths the agent may write (its working directory, each `--writable`) are `nodev` and `nosuid` inside
 * the sandbox (real namespaces, as root): a device node already there, made by whoever owns the directory,
 * does not open as the device. Without it, a node with the numbers of the host's disk or `/dev/mem` in a
 * project directory would give the agent the device itself. The files stay writable.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runSandboxed } from "../../src/index.js";
import { quietRun, scratchDir } from "./net-fixture.js";

// Runs inside: opens each device node for reading and writing, writes a plain file beside it, and reports the
// options of the mount each directory is on (as /proc/self/mountinfo says), as JSON in argv[1].
const AGENT = `
const fs = require("node:fs");
const [out, raw] = process.argv.slice(1);
const dirs = JSON.parse(raw);
const mounts = fs.readFileSync("/proc/self/mountinfo", "utf8").trim().split("\\n").map((l) => l.split(" "));
const r = {};
for (const [name, dir] of Object.entries(dirs)) {
  try { fs.closeSync(fs.openSync(dir + "/node", "r+")); r[name + "_device"] = "ok"; } catch (e) { r[name + "_device"] = e.code; }
  try { fs.writeFileSync(dir + "/plain.txt", "agent\\n"); r[name + "_file"] = "ok"; } catch (e) { r[name + "_file"] = e.code; }
  const at = mounts.filter((f) => f[4] === dir).pop();
  r[name + "_options"] = at ? at[5].split(",").filter((o) => ["rw", "ro", "nodev", "nosuid"].includes(o)).sort() : null;
}
fs.writeFileSync(out, JSON.stringify(r));
`;

let work: { path: string; remove(): void };

/** A character device node at `path` with the numbers of /dev/null (1, 3), readable and writable by all. */
function deviceNode(path: string): void {
  const r = spawnSync("mknod", ["-m", "0666", path, "c", "1", "3"], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`mknod ${path}: ${r.stderr.trim()} (this test needs root)`);
}

beforeAll(() => void (work = scratchDir("acp-sbx-dev-")));
afterAll(() => work?.remove());

describe.each(["netns", "userns"] as const)("isolation %s as root", (level) => {
  it("a device node in the working directory or a --writable path does not open; files there still write", async () => {
    const cwd = join(work.path, `cwd-${level}`);
    const writable = join(work.path, `writable-${level}`);
    const out = join(cwd, "out.json");
    mkdirSync(cwd);
    mkdirSync(writable);
    deviceNode(join(cwd, "node"));
    deviceNode(join(writable, "node"));
    // outside the sandbox, the same nodes open: the refusal inside is the sandbox's
    expect(() => readFileSync(join(cwd, "node"))).not.toThrow();
    const options = quietRun({
      argv: [process.execPath, "-e", AGENT, out, JSON.stringify({ cwd, writable })],
      isolation: level,
      home: join(work.path, "home"),
      env: { PATH: process.env["PATH"] },
      cwd,
      writable: [writable],
    });
    expect(await runSandboxed(options)).toEqual({ level, exitCode: 0 });
    expect(JSON.parse(readFileSync(out, "utf8"))).toEqual({
      cwd_device: "EACCES",
      cwd_file: "ok",
      cwd_options: ["nodev", "nosuid", "rw"],
      writable_device: "EACCES",
      writable_file: "ok",
      writable_options: ["nodev", "nosuid", "rw"],
    });
    expect(readFileSync(join(writable, "plain.txt"), "utf8")).toBe("agent\n");
  });
});

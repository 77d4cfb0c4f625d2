/**
 * The host's filesystem is read-only inside the sandbox (real namespaces, as root): the agent runs as uid 0
 * and would otherwise change whatever root owns outside the covered directories (cron, ACP's installation,
 * the code of the upstream servers that run outside the sandbox). It can still write in its working
 * directory and in each `--writable` path, and cannot open the host's disk (a block device root owns).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkWritablePaths, planNamespace, runSandboxed } from "../../src/index.js";
import { quietRun, scratchDir } from "./net-fixture.js";

// Runs inside: tries each write (and opening the disk for writing), reports each outcome as JSON on argv[1].
const AGENT = `
const fs = require("node:fs");
const [out, raw] = process.argv.slice(1);
const cfg = JSON.parse(raw);
const r = {};
const attempt = (name, fn) => { try { fn(); r[name] = "ok"; } catch (e) { r[name] = e.code; } };
attempt("create_in_host_dir", () => fs.writeFileSync(cfg.hostDir + "/planted.sh", "echo pwned\\n"));
attempt("change_host_file", () => fs.appendFileSync(cfg.hostDir + "/existing.sh", "echo pwned\\n"));
attempt("chmod_host_file", () => fs.chmodSync(cfg.hostDir + "/existing.sh", 0o777));
attempt("write_in_cwd", () => fs.writeFileSync("written-in-cwd.txt", "agent\\n"));
attempt("write_in_writable", () => fs.writeFileSync(cfg.writable + "/written.txt", "agent\\n"));
attempt("write_in_tmp", () => fs.writeFileSync("/tmp/scratch.txt", "agent\\n"));
if (cfg.disk) attempt("open_disk_for_writing", () => fs.closeSync(fs.openSync(cfg.disk, "r+")));
attempt("write_dev_null", () => fs.writeFileSync("/dev/null", "x"));
fs.writeFileSync(out, JSON.stringify(r));
`;

let work: { path: string; remove(): void };
let hostDir: string;
let disk: string | null;

/** The block device holding `/`, when it has a node under /dev (`/dev/vda`, `/dev/sda1`, `/dev/nvme0n1p2`). */
function rootDisk(): string | null {
  const dev = statSync("/").dev;
  try {
    const uevent = readFileSync(`/sys/dev/block/${Math.floor(dev / 256)}:${dev % 256}/uevent`, "utf8");
    const name = /^DEVNAME=(.+)$/m.exec(uevent)?.[1];
    return name !== undefined && existsSync(`/dev/${name}`) ? `/dev/${name}` : null;
  } catch {
    return null;
  }
}

beforeAll(() => {
  work = scratchDir("acp-sbx-ro-");
  // a directory root owns outside every covered directory, like /etc/cron.d or ACP's installation
  hostDir = join(work.path, "host");
  mkdirSync(hostDir, { mode: 0o755 });
  writeFileSync(join(hostDir, "existing.sh"), "echo hello\n", { mode: 0o644 });
  disk = rootDisk();
});

afterAll(() => work?.remove());

describe.each(["netns", "userns"] as const)("isolation %s as root", (level) => {
  it("the agent cannot create or change files outside the covered directories, but writes where it may", async () => {
    const cwd = join(work.path, `cwd-${level}`);
    const writable = join(work.path, `writable-${level}`);
    mkdirSync(cwd);
    mkdirSync(writable);
    const out = join(cwd, "out.json");
    const options = quietRun({
      argv: [process.execPath, "-e", AGENT, out, JSON.stringify({ hostDir, writable, disk })],
      isolation: level,
      home: join(work.path, "home"),
      env: { PATH: process.env["PATH"] },
      cwd,
      writable: [writable],
    });
    expect(await runSandboxed(options)).toEqual({ level, exitCode: 0 });
    const result = JSON.parse(readFileSync(out, "utf8")) as Record<string, string>;
    expect(result).toMatchObject({
      create_in_host_dir: "EROFS",
      change_host_file: "EROFS",
      chmod_host_file: "EROFS",
      write_in_cwd: "ok",
      write_in_writable: "ok",
      write_in_tmp: "ok",
      write_dev_null: "ok",
    });
    if (disk !== null) expect(result["open_disk_for_writing"]).toBe("EACCES");
    // and on the host: nothing planted, nothing changed; the allowed writes landed
    expect(existsSync(join(hostDir, "planted.sh"))).toBe(false);
    expect(readFileSync(join(hostDir, "existing.sh"), "utf8")).toBe("echo hello\n");
    expect(statSync(join(hostDir, "existing.sh")).mode & 0o777).toBe(0o644);
    expect(readFileSync(join(cwd, "written-in-cwd.txt"), "utf8")).toBe("agent\n");
    expect(readFileSync(join(writable, "written.txt"), "utf8")).toBe("agent\n");
  });
});

describe.each(["netns", "userns"] as const)("isolation %s as root, a checkout under /tmp", (level) => {
  let tmp: string;
  beforeAll(() => void (tmp = mkdtempSync("/tmp/acp-sbx-ro-")));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it("the working directory inside the entry a command-line path brings back stays writable; the rest not", async () => {
    // `cd /tmp/X/work && acp run -- node /tmp/X/tool.js`: /tmp/X comes back read-only, /tmp/X/work writable
    const cwd = join(tmp, "work");
    mkdirSync(cwd);
    const tool = join(tmp, "tool.js");
    writeFileSync(
      tool,
      `const fs = require("node:fs");
const r = {};
for (const [name, file] of [["cwd", "written.txt"], ["beside", ${JSON.stringify(join(tmp, "planted.txt"))}]]) {
  try { fs.writeFileSync(file, "agent\\n"); r[name] = "ok"; } catch (e) { r[name] = e.code; }
}
fs.writeFileSync("result.json", JSON.stringify(r));
`,
    );
    const plan = planNamespace({
      argv: [process.execPath, tool],
      env: {},
      cwd,
      home: join(work.path, "home"),
      bridgeDir: work.path,
      setpriv: "/usr/bin/setpriv",
      ports: { mcp: 1, egress: 2 },
    });
    expect(plan.keep.map((k) => k.path)).toEqual([tmp, cwd]);
    const result = await runSandboxed(
      quietRun({
        argv: [process.execPath, tool],
        isolation: level,
        home: join(work.path, "home"),
        env: { PATH: process.env["PATH"] },
        cwd,
      }),
    );
    expect(result).toEqual({ level, exitCode: 0 });
    expect(JSON.parse(readFileSync(join(cwd, "result.json"), "utf8"))).toEqual({ cwd: "ok", beside: "EROFS" });
    expect(readFileSync(join(cwd, "written.txt"), "utf8")).toBe("agent\n");
    expect(existsSync(join(tmp, "planted.txt"))).toBe(false);
  });
});

describe("--writable paths", () => {
  it("refuses a path inside ACP's home, `/`, and a path that does not exist, saying why", () => {
    const home = join(work.path, "home-check");
    mkdirSync(join(home, "keys"), { recursive: true });
    const r = checkWritablePaths([join(home, "keys"), home, "/", join(work.path, "no-such-dir")], home);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues.map((i) => i.message)).toEqual([
      expect.stringContaining("inside ACP's home") as unknown,
      expect.stringContaining("inside ACP's home") as unknown,
      expect.stringContaining("would leave the whole host writable") as unknown,
      expect.stringContaining("does not exist") as unknown,
    ]);
    expect(r.issues[0]?.message).toContain("policy, audit trail, keys and vault");
  });

  it("refuses a shared directory the sandbox covers (/tmp, /run, /var/tmp, /dev/shm), not a directory under it", () => {
    const roots = ["/tmp", "/var/tmp", "/dev/shm", "/run"].filter((p) => existsSync(p));
    const r = checkWritablePaths(roots, join(work.path, "home"));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues.map((i) => i.path)).toEqual(roots);
    expect(r.issues[0]?.message).toBe(
      "--writable `/tmp` is shared by every program on this host (their temporary files and sockets, which lead out of the sandbox); the agent gets an empty one of its own",
    );
    expect(r.issues[0]?.help).toBe("name a directory of the agent's own instead, e.g. `mkdir /tmp/agent-work`");
    const own = mkdtempSync("/tmp/acp-sbx-own-");
    try {
      expect(checkWritablePaths([own], join(work.path, "home"))).toEqual({ ok: true, paths: [own] });
    } finally {
      rmSync(own, { recursive: true, force: true });
    }
  });

  it("refuses a directory in the host's runtime directory /run (/run/user/UID: a session's D-Bus, ssh-agent)", () => {
    const inRun = ["/run/user", "/run/lock", "/var/run/lock"].filter((p) => existsSync(p));
    const r = checkWritablePaths(inRun, join(work.path, "home"));
    expect(r.ok).toBe(inRun.length === 0);
    if (r.ok) return;
    expect(r.issues.map((i) => i.path)).toEqual(inRun);
    expect(r.issues[0]?.message).toBe(
      `--writable \`${inRun[0] ?? ""}\` lies in the host's runtime directory /run, whose sockets (a session's D-Bus, ssh-agent, the display) lead out of the sandbox`,
    );
  });

  it("keeps a working directory in /run covered: it is neither bound back nor writable", () => {
    const cwd = ["/run/lock", "/run/user"].find((p) => existsSync(p));
    if (cwd === undefined) return;
    const plan = planNamespace({
      argv: ["/bin/true"],
      env: {},
      cwd,
      home: join(work.path, "home"),
      bridgeDir: work.path,
      setpriv: "/usr/bin/setpriv",
      ports: { mcp: 1, egress: 2 },
    });
    expect(plan.writable).toEqual([]);
    expect(plan.keep.map((k) => k.path)).not.toContain(cwd);
    expect(plan.cover.map((c) => c.path)).toContain("/run");
  });

  it("keeps /tmp and /run covered when the agent's command line names them (`--add-dir /tmp`)", () => {
    const inRun = ["/run/lock", "/run/user"].filter((p) => existsSync(p));
    const plan = planNamespace({
      argv: ["/bin/true", "--add-dir", "/tmp", ...inRun],
      env: {},
      cwd: work.path,
      home: join(work.path, "home"),
      bridgeDir: work.path,
      setpriv: "/usr/bin/setpriv",
      ports: { mcp: 1, egress: 2 },
    });
    // the stage root is covered first, the others after it
    const covered = [plan.stage.path, ...plan.cover.map((c) => c.path)];
    expect(covered).toEqual(expect.arrayContaining(["/tmp", "/run"]));
    for (const p of ["/tmp", ...inRun]) expect(plan.keep.map((k) => k.path)).not.toContain(p);
  });

  it("accepts a directory outside the home, by its real path", () => {
    expect(checkWritablePaths([work.path, work.path], join(work.path, "home"))).toEqual({
      ok: true,
      paths: [work.path],
    });
  });
});

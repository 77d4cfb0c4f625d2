/**
 * ACP's home reached at another path through a bind mount the host has (`/srv/data` bound at `/mnt/data`
 * shows the home `/srv/data/acp` at `/mnt/data/acp`; a bind of its `keys/` elsewhere shows that part): the
 * aliases are found in the mount table and confirmed by device and inode, the sandbox covers each like the
 * home, and a working directory or `--writable` path inside one is refused as inside the home.
 *
 * The real runs make their bind mounts in a mount namespace of their own (`unshare --mount`), never the
 * host's, and drive the built sandbox (`dist/`) from there, as root, under netns and userns.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { homeAliasesIn, parseMountInfo } from "../../src/sandbox/home-aliases.js";
import { checkWritablePaths, runSandboxed } from "../../src/index.js";
import { fillHome, quietRun, scratchDir } from "./net-fixture.js";

const DIST = fileURLToPath(new URL("../../dist/index.js", import.meta.url));

const MOUNTINFO = [
  "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw",
  "42 27 254:0 /run/netns /run/netns rw,relatime shared:1 - ext4 /dev/vda rw",
  "50 27 254:0 /srv/data /mnt/data rw,relatime - ext4 /dev/vda rw",
  "51 27 254:0 /srv/data/acp/keys /opt/keys rw,relatime - ext4 /dev/vda rw",
  "52 27 0:40 /srv/data /x rw,relatime - tmpfs tmpfs rw",
  "53 27 254:0 / /mnt/my\\040root rw,relatime - ext4 /dev/vda rw",
  "54 50 254:0 /srv/data/acp/keys /mnt/data/acp/keys rw,relatime - ext4 /dev/vda rw",
  "55 27 254:0 /srv /hidden rw,relatime - ext4 /dev/vda rw",
  "56 27 254:0 /srv/data/acp/keys /srv/data/acp/keys2 rw,relatime - ext4 /dev/vda rw",
].join("\n");

describe("homeAliasesIn", () => {
  it("finds every other path that shows the home or a part of it, on the same file system, as confirmed", () => {
    const confirmed: [string, string][] = [];
    const aliases = homeAliasesIn("/srv/data/acp", 27, parseMountInfo(MOUNTINFO), (a, b) => {
      confirmed.push([a, b]);
      return !a.startsWith("/hidden"); // a later mount hides /hidden: it is not the home there
    });
    expect(aliases).toEqual([
      { path: "/mnt/data/acp", of: "/srv/data/acp" },
      { path: "/opt/keys", of: "/srv/data/acp/keys" },
      { path: "/mnt/my root/srv/data/acp", of: "/srv/data/acp" },
    ]);
    // another file system (0:40), a mount beside the home (/run/netns), the home itself and mounts inside it
    // are never candidates; the one inside another alias is covered with it
    expect(confirmed.map(([a]) => a)).not.toContain("/x/acp");
    expect(confirmed.map(([a]) => a)).not.toContain("/srv/data/acp");
    expect(confirmed.map(([a]) => a)).toContain("/hidden/data/acp");
  });

  it("finds none when the home's mount is not listed", () => {
    expect(homeAliasesIn("/srv/data/acp", 99, parseMountInfo(MOUNTINFO), () => true)).toEqual([]);
  });
});

// Runs in the sandbox: reads and writes the home through each alias, moves the directory holding it.
const AGENT = `
const fs = require("node:fs");
const cfg = JSON.parse(process.argv[1]);
const r = {};
const attempt = (name, fn) => { try { const v = fn(); r[name] = v === undefined ? "ok" : v; } catch (err) { r[name] = err.code; } };
attempt("read_writable_alias", () => fs.readFileSync(cfg.mnt + "/state/acp/vault.json", "utf8"));
attempt("write_writable_alias", () => fs.writeFileSync(cfg.mnt + "/state/acp/policy.yml", "evil\\n"));
attempt("move_writable_alias", () => fs.renameSync(cfg.mnt + "/state", cfg.mnt + "/state-moved"));
attempt("read_view_alias", () => fs.readFileSync(cfg.view + "/state/acp/keys/private.key", "utf8"));
attempt("read_keys_alias", () => fs.readFileSync(cfg.keys + "/private.key", "utf8"));
attempt("write_beside", () => fs.writeFileSync(cfg.mnt + "/note.txt", "agent\\n"));
fs.writeFileSync("out.json", JSON.stringify(r));
`;

// Drives the built sandbox once (as quietRun does) and prints its result, or the error that stopped it.
const DRIVER = `
import { runSandboxed } from ${JSON.stringify(DIST)};
const given = JSON.parse(process.argv[1]);
try {
  const r = await runSandboxed({
    mcpTarget: { host: "127.0.0.1", port: 9 },
    egress: { allow: [], broker: { ask: () => Promise.resolve({ kind: "expired" }) } },
    audit: { record: () => undefined },
    log: () => undefined,
    signals: { on: () => undefined, off: () => undefined },
    env: { PATH: process.env.PATH },
    ...given,
  });
  process.stdout.write(JSON.stringify(r));
} catch (err) {
  process.stdout.write(JSON.stringify({ code: err.code, message: err.message }));
}
`;

let work: { path: string; remove(): void };
beforeAll(() => void (work = scratchDir("acp-sbx-alias-")));
afterAll(() => work?.remove());

/** The layout of one run: the home in `data/state/acp`, `data` bound at `mnt` and `view`, `keys/` at `keys`. */
function layout(name: string) {
  const root = join(work.path, name);
  const data = join(root, "data");
  const home = join(data, "state", "acp");
  const paths = { root, data, home, mnt: join(root, "mnt"), view: join(root, "view"), keys: join(root, "keys") };
  const files = fillHome(home);
  for (const dir of [paths.mnt, paths.view, paths.keys, join(root, "cwd")]) mkdirSync(dir);
  return { ...paths, cwd: join(root, "cwd"), files };
}

/** Runs the driver in a mount namespace of its own where the layout's bind mounts exist. */
function inOwnMounts(l: ReturnType<typeof layout>, given: Record<string, unknown>): Record<string, unknown> {
  const binds = [
    [l.data, l.mnt],
    [l.data, l.view],
    [join(l.home, "keys"), l.keys],
  ];
  const script = `${binds.map(([from, to]) => `mount --bind '${from ?? ""}' '${to ?? ""}'`).join(" && ")} && exec "$@"`;
  const r = spawnSync(
    "unshare",
    [
      "--mount",
      "--propagation",
      "private",
      "--",
      "sh",
      "-c",
      script,
      "sh",
      process.execPath,
      "--input-type=module",
      "-e",
      DRIVER,
      JSON.stringify(given),
    ],
    { encoding: "utf8", timeout: 60_000 },
  );
  if (r.status !== 0) throw new Error(`driver: exit ${String(r.status)}: ${r.stderr}`);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

describe.each(["netns", "userns"] as const)("isolation %s as root", (level) => {
  it("covers the home wherever a bind mount shows it: the agent cannot read, write or move it there", () => {
    const l = layout(`covered-${level}`);
    const result = inOwnMounts(l, {
      argv: [process.execPath, "-e", AGENT, JSON.stringify({ mnt: l.mnt, view: l.view, keys: l.keys })],
      isolation: level,
      home: l.home,
      cwd: l.cwd,
      writable: [l.mnt],
    });
    expect(result).toEqual({ level, exitCode: 0 });
    expect(JSON.parse(readFileSync(join(l.cwd, "out.json"), "utf8"))).toEqual({
      read_writable_alias: "ENOENT",
      write_writable_alias: "EROFS",
      move_writable_alias: "EBUSY",
      read_view_alias: "ENOENT",
      read_keys_alias: "ENOENT",
      write_beside: "ok",
    });
    // on the host, the home is as it was, and the allowed write landed (through the bind, in data/)
    for (const [file, content] of Object.entries(l.files))
      expect(readFileSync(join(l.home, file), "utf8")).toBe(content);
    expect(readFileSync(join(l.data, "note.txt"), "utf8")).toBe("agent\n");
  });
});

describe("a working directory or --writable path inside the home reached through another mount", () => {
  it("is refused as inside ACP's home, naming the path it was reached at", () => {
    const l = layout("refused");
    const viaWritable = inOwnMounts(l, {
      argv: ["/bin/true"],
      isolation: "netns",
      home: l.home,
      cwd: l.cwd,
      writable: [join(l.mnt, "state", "acp", "keys")],
    });
    expect(viaWritable["code"]).toBe("sandbox_setup_failed");
    expect(viaWritable["message"]).toContain(
      `--writable \`${join(l.mnt, "state", "acp", "keys")}\` is inside ACP's home \`${l.home}\` (reached at \`${join(l.mnt, "state", "acp", "keys")}\` through another mount)`,
    );
    const viaCwd = inOwnMounts(l, {
      argv: ["/bin/true"],
      isolation: "netns",
      home: l.home,
      cwd: l.keys,
    });
    expect(viaCwd["code"]).toBe("sandbox_cwd_in_home");
  });

  it("is accepted by checkWritablePaths where no mount shows the home (the host's own namespace here)", () => {
    const l = layout("plain");
    expect(checkWritablePaths([l.mnt], l.home)).toEqual({ ok: true, paths: [l.mnt] });
  });
});

// Runs in the sandbox: for every mount it has whose file-system directory holds the home, reads the home's
// vault.json through it; lists the paths that gave it.
const EVERY_MOUNT = `
const fs = require("node:fs");
const path = require("node:path");
const home = process.env.HOME_IN_FS;
const found = [];
for (const line of fs.readFileSync("/proc/self/mountinfo", "utf8").trim().split("\\n")) {
  const f = line.split(" ");
  const root = f[3];
  if (home !== root && !home.startsWith(root === "/" ? "/" : root + "/")) continue;
  const p = path.join(f[4], path.relative(root, home), "vault.json");
  try { fs.readFileSync(p); found.push(p); } catch {}
}
fs.writeFileSync("found.json", JSON.stringify(found));
`;

/** `path` as its file system has it (the directory of the mount's file system), by the longest mount point. */
function inFileSystem(path: string): string {
  const held = parseMountInfo(readFileSync("/proc/self/mountinfo", "utf8"))
    .filter((m) => path === m.path || path.startsWith(m.path === "/" ? "/" : `${m.path}/`))
    .sort((a, b) => b.path.length - a.path.length)[0];
  return held === undefined ? path : join(held.root, relative(held.path, path));
}

describe.each(["netns", "userns"] as const)(
  "isolation %s as root, the home under a working directory in /tmp",
  (level) => {
    let tmp: string;
    beforeAll(() => void (tmp = mkdtempSync("/tmp/acp-sbx-alias-")));
    afterAll(() => rmSync(tmp, { recursive: true, force: true }));

    it("no mount inside shows the home: the staged copy of the working directory is gone", async () => {
      const cwd = join(tmp, "work");
      const home = join(cwd, "acp");
      fillHome(home);
      const result = await runSandboxed(
        quietRun({
          argv: [process.execPath, "-e", EVERY_MOUNT],
          isolation: level,
          home,
          // (not on the command line: a path there under /tmp would bring back the directory holding it)
          env: { PATH: process.env["PATH"], HOME_IN_FS: inFileSystem(home) },
          cwd,
        }),
      );
      expect(result).toEqual({ level, exitCode: 0 });
      expect(JSON.parse(readFileSync(join(cwd, "found.json"), "utf8"))).toEqual([]);
    });
  },
);

/**
 * The sandbox's init: a small Node program that runs as PID 1 inside the new namespaces (started by
 * `unshare`). It brings loopback up, covers ACP's home, `/tmp`, `/run`, the resolver and the home's socket
 * directories (refilled with copies of their files) with empty filesystems, hides the kernel's key list (`/proc/keys`, `/proc/key-users`) behind empty files, makes every other mount read-only except the writable paths (the working directory and each
 * `--writable`), starts the loopback forwarders to the bridge sockets, then starts the agent with every
 * capability dropped (`setpriv`), forwards signals to the agent's process group and exits with its status
 * (when PID 1 exits, the kernel kills whatever is left in the namespace: nothing is orphaned).
 *
 * It is kept as source text (run with `node --input-type=module -e`) so that it runs the same from the
 * sources and from the build. Its config (`SandboxInitConfig`) comes as JSON on file descriptor 4, never on its
 * command line: that is readable by every user of the host (`/proc/PID/cmdline`, `ps`), and the config holds
 * the agent's environment (its own API keys among it).
 */

import type { HomeAlias } from "./home-aliases.js";
import type { CpuCap } from "./cpu-cap.js";
import type { MemoryCap } from "./memory-cap.js";
import type { ProcessCap } from "./process-cap.js";
import type { SessionKeyring } from "./session-keyring.js";
import type { SocketDirCover } from "./socket-dir-covers.js";

/** Loopback ports of the forwarders inside the sandbox (its loopback is its own, so these are always free). */
export const SANDBOX_PORTS = { mcp: 47311, egress: 47312 } as const;

/** One filesystem covered with an empty tmpfs. */
export interface CoverMount {
  readonly path: string;
  readonly mode: string;
}

/** A path under a covered directory that is bound back over the cover (the agent needs it). */
export interface KeptPath {
  readonly path: string;
  readonly directory: boolean;
}

/** What the init needs (passed as JSON on file descriptor 4). */
export interface SandboxInitConfig {
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string;
  readonly setpriv: string;
  /** Covered first; the bridge directory and the kept paths are staged in it. */
  readonly stage: CoverMount;
  readonly bridgeDir: string;
  readonly cover: readonly CoverMount[];
  /** ACP's home (covered read-only and empty), when it exists. */
  readonly home: string | null;
  /** Paths under covered roots bound back after covering (the working directory, the agent's program). */
  readonly keep: readonly KeptPath[];
  /** The resolver file to replace with an empty one, when it is not already under a covered root. */
  readonly resolvConf: string | null;
  /**
   * Paths that stay writable (the working directory unless it is `/`, each `--writable`): every mount at or
   * under one stays writable (made `nodev` and `nosuid`); every other mount the agent can reach is made
   * read-only (and `nodev`, `nosuid`).
   */
  readonly writable: readonly string[];
  /** The writable paths outside the covered roots, bound onto themselves (recursively) so they are mounts. */
  readonly bindWritable: readonly string[];
  /**
   * The directories between a writable path and ACP's home, outermost first, each bound onto itself before
   * the home is covered: mount points cannot be renamed or removed, so the agent cannot move the home's
   * cover away and put a home of its own in its place (`pinnedDirectories`).
   */
  readonly pinned: readonly string[];
  /**
   * ACP's home, or a part of it, reached at another path through a bind mount the host has
   * (`findHomeAliases`): each covered like the home (a directory with an empty read-only tmpfs, a file with
   * an empty read-only file) while it still is the same file by device and inode.
   */
  readonly homeAliases: readonly HomeAlias[];
  /**
   * Pathname Unix sockets outside the covered roots that lead out (`findUserSockets`: an SSH master, ssh-agent,
   * gpg-agent, Docker's): each gets an empty, read-only file bound over it, so connecting to it is refused.
   */
  readonly socketCovers: readonly string[];
  /**
   * The home's socket directories (`~/.ssh`, `~/.gnupg`, Docker's: `planSocketDirCovers`), each covered with an
   * empty tmpfs that gets copies of the entries listed, then turns read-only: no socket there is reachable,
   * one made after the start or one deeper than the search at start looks among them.
   */
  readonly socketDirs: readonly SocketDirCover[];
  readonly ports: { readonly mcp: number; readonly egress: number };
  /** The cap on the sandbox's processes (`ProcessCap`), or null when none can be applied here. */
  readonly processCap: ProcessCap | null;
  /** The cap on the sandbox's memory (`MemoryCap`: a cgroup the init enters), or null when none applies here. */
  readonly memoryCap: MemoryCap | null;
  /** The cap on the sandbox's CPU time (`CpuCap`: a cgroup the init enters), or null when there is none. */
  readonly cpuCap: CpuCap | null;
  /**
   * How the agent gets a session keyring of its own (`sessionKeyring`), or null when it cannot here (it then
   * shares acp's, and `acp run` said so).
   */
  readonly sessionKeyring: SessionKeyring | null;
}

/** The init program. Writes one JSON status line (ready or error) to fd 3, then closes it. */
export const SANDBOX_INIT_SOURCE = String.raw`
import { spawn, spawnSync } from "node:child_process";
import { accessSync, chmodSync, closeSync, constants, existsSync, fstatSync, lchownSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, statSync, symlinkSync, unlinkSync, writeFileSync, writeSync } from "node:fs";
import { createServer, connect } from "node:net";
import { constants as osConstants } from "node:os";
import { delimiter, dirname, join } from "node:path";

// the config on fd 4 (not on the command line, which every user of the host can read), read to its end and closed
const cfg = JSON.parse(readFileSync(4, "utf8"));
closeSync(4);

// Descriptors acp inherited from whoever started it (a shell's "exec 9<file", a leaked socket of an IDE or
// a service manager) would pass to the agent: a file outside the sandbox's view, or a socket in the host's
// network namespace. Node opens its own with O_CLOEXEC, so every descriptor above the status pipe (3) without
// it came from outside: closed before anything is started.
for (const name of readdirSync("/proc/self/fd")) {
  const fd = Number(name);
  if (!(fd > 3)) continue;
  let flags;
  try {
    flags = /^flags:\s*([0-7]+)/m.exec(readFileSync("/proc/self/fdinfo/" + name, "utf8"));
  } catch {
    continue; // gone (the directory listing's own descriptor)
  }
  if (!flags || (parseInt(flags[1], 8) & 0o2000000) === 0) {
    try { closeSync(fd); } catch {}
  }
}
// the home's aliases, by device and inode, taken before anything is mounted over the home
const fileId = (p) => { try { const s = statSync(p, { bigint: true }); return s.dev + ":" + s.ino; } catch { return null; } };
const aliases = cfg.homeAliases.map((a) => ({ path: a.path, id: fileId(a.of) }));
const status = (value) => {
  try { writeSync(3, JSON.stringify(value) + "\n"); } catch {}
};
const fail = (code, message) => {
  status({ type: "error", code, message });
  process.exit(125);
};
// The caps' cgroups (processes, memory, CPU time; on cgroup v2 one cgroup holds them all): the init moves
// itself in first (before the cgroup mount turns read-only below), and everything it starts, the agent's whole
// tree, stays in them
const entered = new Set();
for (const [what, cap] of [["processes", cfg.processCap], ["memory", cfg.memoryCap], ["CPU time", cfg.cpuCap]]) {
  if (!cap || cap.kind !== "cgroup" || entered.has(cap.path)) continue;
  try {
    writeFileSync(join(cap.path, "cgroup.procs"), "0");
    entered.add(cap.path);
  } catch (err) {
    fail("sandbox_setup_failed", "cannot enter the cgroup that caps the agent's " + what + " (" + cap.path + "): " + (err.code || err.message));
  }
}
const run = (what, cmd, args) => {
  const r = spawnSync(cmd, args, { encoding: "utf8", stdio: ["ignore", "ignore", "pipe"] });
  if (r.status !== 0) {
    const why = (r.error ? r.error.message : r.stderr || (r.signal ? "killed by " + r.signal : "exit " + r.status)).trim().split("\n")[0];
    fail("sandbox_setup_failed", what + ": " + why);
  }
};
const tmpfs = (m, extra) => run("cannot cover " + m.path, "mount", ["-t", "tmpfs", "-o", "mode=" + m.mode + ",size=" + (extra || "64m"), "tmpfs", m.path]);
const bind = (from, to) => run("cannot bind " + from + " to " + to, "mount", ["--bind", from, to]);

run("cannot bring loopback up", "ip", ["link", "set", "lo", "up"]);
tmpfs(cfg.stage);
const bridge = join(cfg.stage.path, "acp");
mkdirSync(bridge, { mode: 0o700 });
bind(cfg.bridgeDir, bridge);
// a mount point for one kept path (a directory, or an empty file for a file)
const mountPoint = (path, directory) => {
  if (directory) { mkdirSync(path, { recursive: true }); return; }
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, "");
};
const staged = cfg.keep.map((k, i) => join(cfg.stage.path, ".acp-keep", String(i)));
cfg.keep.forEach((k, i) => { mountPoint(staged[i], k.directory); bind(k.path, staged[i]); });
if (cfg.resolvConf) {
  const dir = join(cfg.stage.path, ".acp-resolv");
  mkdirSync(dir);
  run("cannot replace the resolver", "mount", ["-t", "tmpfs", "-o", "mode=0755,size=4k", "tmpfs", dir]);
  writeFileSync(join(dir, "resolv.conf"), "# acp run: no DNS inside the sandbox\n", { mode: 0o444 });
  bind(join(dir, "resolv.conf"), cfg.resolvConf);
  // read-only per mount point (a plain remount would have to repeat the flags a user namespace locks)
  run("cannot replace the resolver", "mount", ["-o", "remount,bind,ro", cfg.resolvConf]);
  run("cannot replace the resolver", "mount", ["-o", "remount,bind,ro", dir]);
}
for (const m of cfg.cover) tmpfs(m);
cfg.keep.forEach((k, i) => { mountPoint(k.path, k.directory); bind(staged[i], k.path); });
// the staged copies go: left in the stage (/run/.acp-keep/N), each would show its tree at a second path, which
// the covers below (ACP's home under a kept working directory among them) know nothing of
staged.forEach((p) => run("cannot bring " + p + " back", "umount", [p]));
// the writable paths outside the covered roots become mounts of their own (with what is mounted under them)
for (const w of cfg.bindWritable) run("cannot keep " + w + " writable", "mount", ["--rbind", w, w]);
// the directories between a writable path and the home become mount points: they cannot be renamed away
for (const d of cfg.pinned) run("cannot keep ACP's home in place at " + d, "mount", ["--bind", d, d]);
// The home's socket directories (~/.ssh, ~/.gnupg, Docker's): each is staged, an empty tmpfs goes over it and
// gets copies of its directories, files and links (never a socket, a pipe or a device), then turns read-only.
// A socket made there later, or deeper than acp looked, is in the host's directory, under the cover. Checked:
// none may still be the host's directory
const copyFile = (from, to) => {
  let src = -1;
  let dst = -1;
  try {
    // not followed, and not waited on: what is no longer a regular file is left out
    src = openSync(from, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    if (!fstatSync(src).isFile()) return false;
    dst = openSync(to, "wx", 0o600);
    const buf = Buffer.alloc(65536);
    for (let n = readSync(src, buf); n > 0; n = readSync(src, buf)) writeSync(dst, buf, 0, n);
    return true;
  } catch {
    if (dst !== -1) { closeSync(dst); dst = -1; try { unlinkSync(to); } catch {} } // no room left: none of it
    return false;
  } finally {
    if (src !== -1) closeSync(src);
    if (dst !== -1) closeSync(dst);
  }
};
// its owner (unless the user namespace does not map it), then its mode
const own = (p, e) => { try { lchownSync(p, e.uid, e.gid); } catch {} if (e.kind !== "link") chmodSync(p, e.mode); };
cfg.socketDirs.forEach((d, i) => {
  const before = fileId(d.path);
  const from = join(cfg.stage.path, ".acp-socket-dir", String(i));
  mkdirSync(from, { recursive: true });
  bind(d.path, from);
  run("cannot cover " + d.path, "mount", ["-t", "tmpfs", "-o", "mode=0700,nodev,nosuid,size=" + d.size, "tmpfs", d.path]);
  const dirs = [{ path: "", mode: parseInt(d.mode, 8), uid: d.uid, gid: d.gid }];
  for (const e of d.entries) {
    const to = join(d.path, e.path);
    try {
      if (e.kind === "directory") { mkdirSync(to, { mode: 0o700 }); dirs.push(e); }
      else if (e.kind === "link") { symlinkSync(e.target, to); own(to, e); }
      else if (copyFile(join(from, e.path), to)) own(to, e);
    } catch {} // its directory was left out
  }
  // the directories' own modes last (one without write permission would have refused what goes in it)
  for (const e of dirs.reverse()) { try { own(join(d.path, e.path), e); } catch {} }
  run("cannot cover " + d.path, "umount", [from]);
  run("cannot cover " + d.path, "mount", ["-o", "remount,bind,ro,nodev,nosuid", d.path]);
  if (fileId(d.path) === before) fail("sandbox_setup_failed", "the socket directory " + d.path + " is still the host's");
});
if (cfg.home) {
  mkdirSync(cfg.home, { recursive: true });
  run("cannot cover ACP's home", "mount", ["-t", "tmpfs", "-o", "ro,mode=0555,size=4k", "tmpfs", cfg.home]);
}
// The empty file bound over what is hidden (a file alias of the home, a socket, /proc/keys): in a tmpfs of its
// own, read-only before anything is bound from it. Left in the stage, a writable tmpfs, it would belong to the
// agent (uid 0 under netns, the namespace's root under userns), which could chmod it and write into it, and
// every cover bound from it, /proc/keys among them, would read what the agent wrote
let emptyPath = null;
const emptyFile = () => {
  if (emptyPath !== null) return emptyPath;
  const dir = join(cfg.stage.path, ".acp-empty");
  mkdirSync(dir);
  run("cannot make the empty cover file", "mount", ["-t", "tmpfs", "-o", "mode=0555,size=4k", "tmpfs", dir]);
  writeFileSync(join(dir, "empty"), "", { mode: 0o444 });
  run("cannot make the empty cover file", "mount", ["-o", "remount,bind,ro", dir]);
  emptyPath = join(dir, "empty");
  return emptyPath;
};
// the home (or its keys/, its state.db) reached at another path through a bind mount: covered there too, and
// checked: none may still be the home's own directory or file
const stillHome = () => aliases.filter((a) => a.id !== null && fileId(a.path) === a.id);
for (const a of stillHome()) {
  const what = "cannot cover ACP's home where it is reached at " + a.path;
  if (statSync(a.path).isDirectory()) {
    run(what, "mount", ["-t", "tmpfs", "-o", "ro,mode=0555,size=4k", "tmpfs", a.path]);
  } else {
    bind(emptyFile(), a.path);
    run(what, "mount", ["-o", "remount,bind,ro", a.path]);
  }
}
if (stillHome().length > 0) fail("sandbox_setup_failed", "ACP's home is still reachable at " + stillHome().map((a) => a.path).join(", "));
// the user's sockets that lead out (an SSH master, ssh-agent, gpg-agent, Docker's): an empty, read-only file
// over each, so a connect() meets a plain file; checked: none may still be a socket
const isSocketAt = (p) => { try { return lstatSync(p).isSocket(); } catch { return false; } };
for (const s of cfg.socketCovers) {
  if (!isSocketAt(s)) continue; // gone since acp looked
  bind(emptyFile(), s);
  run("cannot cover the socket " + s, "mount", ["-o", "remount,bind,ro", s]);
}
const openSockets = cfg.socketCovers.filter(isSocketAt);
if (openSockets.length > 0) fail("sandbox_setup_failed", "a socket that leads out of the sandbox stays reachable at " + openSockets.join(", "));
// the kernel's keys are not namespaced: /proc/keys lists every key the agent may view (root's among them,
// under netns as under userns started by root) with its owner and description (a Kerberos principal, a
// service's name), and /proc/key-users every user's count of keys. An empty, read-only file over each; checked:
// nothing may still be read there
for (const p of ["/proc/keys", "/proc/key-users"]) {
  if (!existsSync(p)) continue; // a kernel without keys
  bind(emptyFile(), p);
  run("cannot cover " + p, "mount", ["-o", "remount,bind,ro", p]);
  let text;
  try { text = readFileSync(p, "utf8"); } catch { text = ""; }
  if (text !== "") fail("sandbox_setup_failed", "the kernel's keys stay listed at " + p);
}

// The host read-only: the agent runs as uid 0 under netns (as the user under userns) and would otherwise
// change whatever root (the user) owns outside the covers: cron, ACP's installation, the upstream servers'
// code, ~/.bashrc, /proc/sys, /proc/sysrq-trigger. Mounts the agent can reach are remounted read-only one by
// one (mount(8) has no recursive read-only here), and nodev: a block device (the host's disk) is a special
// file that a read-only mount still lets root write. The device nodes programs need are bound first, each a
// mount of its own that keeps working; ptys (devpts) too. Mounts at or under a writable path and the covers
// are left writable, but they are nodev too: a device node already there (a disk's, /dev/mem's, made by
// whoever owns the directory) would otherwise open as the device inside. Every mount is nosuid as well (the
// agent runs with no_new_privs, which ignores set-user-ID bits already; nosuid says so per mount). A mount
// hidden under a later one cannot be reached and is left alone.
const O_PATH = 0o10000000; // Linux's value (x86, arm, riscv); node:fs does not export it
const within = (p, root) => p === root || p.startsWith(root.endsWith("/") ? root : root + "/");
const octal = (text) => text.replace(/\\([0-7]{3})/g, (_, o) => String.fromCharCode(parseInt(o, 8)));
const mounts = () => readFileSync("/proc/self/mountinfo", "utf8").trim().split("\n").map((line) => {
  const [before, after = ""] = line.split(" - ");
  const f = before.split(" ");
  const options = (f[5] || "").split(",");
  return { id: Number(f[0]), path: octal(f[4] || ""), ro: options.includes("ro"), nodev: options.includes("nodev"), nosuid: options.includes("nosuid"), type: after.split(" ")[0] };
});
const mountAt = (path) => {
  let fd;
  try { fd = openSync(path, O_PATH); } catch { return -1; }
  try {
    const m = /^mnt_id:\s*(\d+)/m.exec(readFileSync("/proc/self/fdinfo/" + fd, "utf8"));
    return m ? Number(m[1]) : -1;
  } finally { closeSync(fd); }
};
const DEVICES = ["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"];
for (const d of DEVICES) if (existsSync(d)) bind(d, d);
// ptys: a fresh devpts instance (the host's terminals, root's other sessions among them, cannot be opened by
// path; the agent keeps the one it inherited through its descriptors), and its own ptmx at /dev/ptmx (the
// host's /dev/ptmx, bound alone, finds no devpts beside it)
if (existsSync("/dev/pts") && existsSync("/dev/ptmx")) {
  run("cannot mount /dev/pts", "mount", ["-t", "devpts", "-o", "newinstance,ptmxmode=0666,mode=0620,nosuid,noexec", "devpts", "/dev/pts"]);
  bind("/dev/pts/ptmx", "/dev/ptmx");
  DEVICES.push("/dev/ptmx");
}
const keepsDevices = (m) => m.type === "devpts" || DEVICES.includes(m.path);
const stays = (m) => cfg.writable.some((w) => within(m.path, w)) || m.path === cfg.stage.path || cfg.cover.some((c) => c.path === m.path);
// what a mount still lacks: ro (unless it stays writable), nodev (unless it holds the devices kept), nosuid
const lacks = (m) => [
  ...(!stays(m) && !m.ro ? ["ro"] : []),
  ...(!m.nodev && !keepsDevices(m) ? ["nodev"] : []),
  ...(!m.nosuid ? ["nosuid"] : []),
];
const stillOpen = () => mounts().filter((m) => lacks(m).length > 0 && mountAt(m.path) === m.id);
for (const m of stillOpen()) {
  // mount(8) keeps the flags the mount has (those a user namespace locks among them) and adds these
  const flags = [...(stays(m) ? [] : ["ro"]), ...(keepsDevices(m) ? [] : ["nodev"]), "nosuid"];
  run("cannot make " + m.path + (stays(m) ? " nodev" : " read-only"), "mount", ["-o", "remount,bind," + flags.join(","), m.path]);
}
const left = stillOpen();
if (left.length > 0) fail("sandbox_setup_failed", "cannot make the host read-only: " + left.map((m) => m.path + " stays " + (lacks(m).includes("ro") ? "writable" : "open to device nodes or set-user-ID programs")).join(", "));

const forward = (socketName, port) => new Promise((resolve, reject) => {
  const server = createServer((inside) => {
    const outside = connect(join(bridge, socketName));
    inside.pipe(outside).pipe(inside);
    inside.on("error", () => outside.destroy());
    outside.on("error", () => inside.destroy());
  });
  server.once("error", reject);
  server.listen(port, "127.0.0.1", () => resolve(server));
});
try {
  await forward("mcp.sock", cfg.ports.mcp);
  await forward("egress.sock", cfg.ports.egress);
} catch (err) {
  fail("sandbox_setup_failed", "cannot start the loopback forwarders: " + err.message);
}

const command = cfg.argv[0];
const found = command.includes("/") ? [command] : (cfg.env.PATH || "").split(delimiter).filter(Boolean).map((d) => join(d, command));
if (!found.some((p) => { try { accessSync(p, constants.X_OK); return true; } catch { return false; } })) {
  fail("sandbox_command_not_found", "command " + JSON.stringify(command) + " not found inside the sandbox");
}
try { process.chdir(cfg.cwd); } catch (err) { fail("sandbox_setup_failed", "cannot enter the working directory " + cfg.cwd + ": " + err.code); }
// the agent's own session keyring: checked here, so that a kernel or a policy that refuses it stops the run
// before it is ready, rather than the agent's start
if (cfg.sessionKeyring) run("cannot give the agent a session keyring of its own", cfg.sessionKeyring.check[0], cfg.sessionKeyring.check.slice(1));

status({ type: "ready" });
closeSync(3);
// Handlers first: a SIGUSR1 reaching this Node process without one of its own starts Node's inspector on
// 127.0.0.1:9229, inside the sandbox's network namespace, and whoever connects to it runs code here, with
// the capabilities the agent was denied. The agent may send it the moment it runs.
let child = null;
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGWINCH"]) {
  process.on(sig, () => { try { if (child && child.pid) process.kill(-child.pid, sig); } catch {} });
}
// RLIMIT_NPROC, soft and hard, when the cap is not a cgroup (the agent cannot raise it again)
const capped = cfg.processCap && cfg.processCap.kind === "rlimit"
  ? [cfg.processCap.prlimit, "--nproc=" + cfg.processCap.max + ":" + cfg.processCap.max, "--", ...cfg.argv]
  : cfg.argv;
// a session keyring of its own (not acp's, whose keys the agent would possess), joined after the capabilities
// are dropped, right before the agent's program
const keyring = cfg.sessionKeyring ? cfg.sessionKeyring.exec : [];
child = spawn(cfg.setpriv, ["--bounding-set=-all", "--inh-caps=-all", "--ambient-caps=-all", "--no-new-privs", "--", ...keyring, ...capped], {
  stdio: "inherit", env: cfg.env, cwd: cfg.cwd, detached: true,
});
child.on("error", (err) => {
  process.stderr.write("acp run: cannot start the agent: " + err.message + "\n");
  process.exit(127);
});
child.on("exit", (code, signal) => {
  try { process.kill(-child.pid, "SIGKILL"); } catch {}
  process.exit(code !== null ? code : 128 + (osConstants.signals[signal] || 0));
});
`;

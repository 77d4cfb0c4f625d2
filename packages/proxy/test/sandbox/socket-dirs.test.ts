/**
 * The home's socket directories (`~/.ssh`, `~/.gnupg`, …) are covered whole inside the sandbox (real
 * namespaces, as root): a socket a program outside makes there after the start (an SSH `ControlMaster`
 * socket, gpg-agent's), one there at the start, and one deeper than the start-up search looks are all out of
 * reach, while the agent still reads copies of the files there (`known_hosts`, `config` with its mode, a link),
 * read-only. Also when the home is the agent's working directory, where `~/.ssh` was writable before.
 */
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { connect, createServer, type Server } from "node:net";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runSandboxed } from "../../src/index.js";
import { DEEP_DEPTH, findUserSockets } from "../../src/sandbox/home-sockets.js";
import { planSocketDirCovers, socketDirsLeftOut } from "../../src/sandbox/socket-dir-covers.js";
import { quietRun, scratchDir } from "./net-fixture.js";

// Runs inside: reads the copies, tries to change them, tries the sockets there at the start, says it is
// ready, waits for the host's late sockets, tries them, and reports as JSON in argv[1].
const AGENT = `
const net = require("node:net");
const fs = require("node:fs");
const path = require("node:path");
const [out, raw] = process.argv.slice(1);
const p = JSON.parse(raw);
const r = {};
const attempt = (fn) => { try { fn(); return "ok"; } catch (e) { return e.code; } };
const tryOne = (s) => new Promise((resolve) => {
  const c = net.connect(s);
  c.on("connect", () => { c.destroy(); resolve("connected"); });
  c.on("error", (e) => resolve(e.code));
});
(async () => {
  r.known_hosts = fs.readFileSync(path.join(p.ssh, "known_hosts"), "utf8");
  r.config_mode = (fs.statSync(path.join(p.ssh, "config")).mode & 0o777).toString(8);
  r.link = fs.readFileSync(path.join(p.ssh, "hosts-link"), "utf8");
  r.pubring = fs.readFileSync(path.join(p.gnupg, "pubring.kbx"), "utf8");
  r.change = attempt(() => fs.appendFileSync(path.join(p.ssh, "known_hosts"), "planted\\n"));
  r.plant = attempt(() => fs.writeFileSync(path.join(p.ssh, "authorized_keys"), "planted\\n"));
  r.early = await tryOne(p.early);
  r.deep = await tryOne(p.deep);
  fs.writeFileSync(p.ready, "");
  while (!fs.existsSync(p.go)) await new Promise((res) => setTimeout(res, 50));
  r.late_ssh = await tryOne(p.lateSsh);
  r.late_gpg = await tryOne(p.lateGpg);
  r.listing = fs.readdirSync(p.ssh).sort();
  fs.writeFileSync(out, JSON.stringify(r));
})();
`;

let work: { path: string; remove(): void };
const listeners: Server[] = [];
beforeAll(() => void (work = scratchDir("acp-sbx-sockdirs-")));
afterAll(() => {
  for (const s of listeners) s.close();
  work.remove();
});

async function listen(path: string): Promise<void> {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const server = createServer((s) => {
    s.on("error", () => undefined);
    s.end("outside\n");
  });
  await new Promise<void>((resolve) => server.listen(path, () => resolve()));
  listeners.push(server);
}

function hostConnects(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(path);
    s.on("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.on("error", () => resolve(false));
  });
}

/** A home with `.ssh` (files, a link, a socket and one deeper than the start-up search looks) and `.gnupg`. */
async function makeHome(home: string): Promise<{ ssh: string; gnupg: string; early: string; deep: string }> {
  const ssh = join(home, ".ssh");
  const gnupg = join(home, ".gnupg");
  mkdirSync(ssh, { recursive: true, mode: 0o700 });
  mkdirSync(gnupg, { recursive: true, mode: 0o700 });
  writeFileSync(join(ssh, "known_hosts"), "example.com ssh-ed25519 AAAA\n", { mode: 0o644 });
  writeFileSync(join(ssh, "config"), "Host *\n  ControlMaster auto\n", { mode: 0o600 });
  symlinkSync("known_hosts", join(ssh, "hosts-link"));
  writeFileSync(join(gnupg, "pubring.kbx"), "public keys\n", { mode: 0o600 });
  const early = join(ssh, "cm-early");
  // DEEP_DEPTH directories down: the start-up search does not look at what they hold
  const deep = join(ssh, ...Array.from({ length: DEEP_DEPTH }, (_, i) => `d${i}`), "deep.sock");
  await listen(early);
  await listen(deep);
  return { ssh, gnupg, early, deep };
}

describe.each(["netns", "userns"] as const)("isolation %s as root", (level) => {
  it.each([
    ["elsewhere", false],
    ["the home", true],
  ] as const)(
    "with the working directory %s, no socket in ~/.ssh or ~/.gnupg is reachable, made before or after the start, while the files there are read",
    async (name, cwdIsHome) => {
      const home = join(work.path, `home-${level}-${String(cwdIsHome)}`);
      const { ssh, gnupg, early, deep } = await makeHome(home);
      expect(findUserSockets({ env: { HOME: home }, skip: [] })).not.toContain(deep);
      const cwd = cwdIsHome ? home : join(work.path, `cwd-${level}`);
      mkdirSync(cwd, { recursive: true });
      const paths = {
        ssh,
        gnupg,
        early,
        deep,
        ready: join(cwd, "ready"),
        go: join(cwd, "go"),
        lateSsh: join(ssh, "cm-git@example.com:22"),
        lateGpg: join(gnupg, "S.gpg-agent"),
      };
      const out = join(cwd, "out.json");
      const run = runSandboxed(
        quietRun({
          argv: [process.execPath, "-e", AGENT, out, JSON.stringify(paths)],
          isolation: level,
          home: join(work.path, "acp-home"),
          env: { PATH: process.env["PATH"] ?? "", HOME: home },
          cwd,
        }),
      );
      let ended = false;
      void run.finally(() => (ended = true));
      while (!existsSync(paths.ready) && !ended) await new Promise((res) => setTimeout(res, 50));
      // the host's ssh and gpg-agent start now, after the sandbox did
      await listen(paths.lateSsh);
      await listen(paths.lateGpg);
      writeFileSync(paths.go, "");
      expect(await run).toEqual({ level, exitCode: 0 });
      const r = JSON.parse(readFileSync(out, "utf8")) as Record<string, unknown>;
      expect(r).toMatchObject({
        known_hosts: "example.com ssh-ed25519 AAAA\n",
        config_mode: "600",
        link: "example.com ssh-ed25519 AAAA\n",
        pubring: "public keys\n",
        change: "EROFS",
        plant: "EROFS",
        early: "ENOENT",
        deep: "ENOENT",
        late_ssh: "ENOENT",
        late_gpg: "ENOENT",
        listing: ["config", "d0", "hosts-link", "known_hosts"],
      });
      // outside, everything is as it was: the files unchanged, every listener live
      expect(readFileSync(join(ssh, "known_hosts"), "utf8")).toBe("example.com ssh-ed25519 AAAA\n");
      expect(existsSync(join(ssh, "authorized_keys"))).toBe(false);
      for (const s of [early, deep, paths.lateSsh, paths.lateGpg]) expect(await hostConnects(s), s).toBe(true);
    },
  );
});

describe("planSocketDirCovers", () => {
  const plan = (home: string, more: Partial<Parameters<typeof planSocketDirCovers>[0]> = {}) =>
    planSocketDirCovers({ env: { HOME: home }, covered: [], kept: [], protect: [], inside: [], ...more }).filter((c) =>
      c.path.startsWith(`${home}/`),
    );

  it("lists the directories, files and links to copy, parents first, with their modes, and leaves out sockets and pipes", async () => {
    const home = join(work.path, "unit-list");
    const { ssh } = await makeHome(home);
    expect(spawnSync("mkfifo", [join(ssh, "fifo")]).status).toBe(0);
    const [cover, gpg, ...rest] = plan(home);
    expect(rest).toEqual([]);
    // the deep socket, past the last level, is left out
    expect(cover).toMatchObject({ path: ssh, mode: "0700", leftOut: 1 });
    expect(gpg?.path).toBe(join(home, ".gnupg"));
    const entries = cover?.entries ?? [];
    expect(entries.map((e) => e.path)).toEqual([
      "config",
      "d0",
      "hosts-link",
      "known_hosts",
      ...Array.from({ length: DEEP_DEPTH - 1 }, (_, i) => join(...Array.from({ length: i + 2 }, (_, j) => `d${j}`))),
    ]);
    expect(entries.find((e) => e.path === "config")).toMatchObject({ kind: "file", mode: 0o600 });
    expect(entries.find((e) => e.path === "hosts-link")).toMatchObject({ kind: "link", target: "known_hosts" });
    expect(entries.find((e) => e.path === "d0")).toMatchObject({ kind: "directory", mode: 0o700 });
  });

  it("covers none that holds what must stay, lies in a covered root unless kept, or lies in ACP's home", async () => {
    const home = join(work.path, "unit-skip");
    const { ssh, gnupg } = await makeHome(home);
    expect(plan(home, { protect: [join(ssh, "d0")] }).map((c) => c.path)).toEqual([gnupg]);
    expect(plan(home, { covered: [home] })).toEqual([]);
    expect(plan(home, { covered: [home], kept: [ssh] }).map((c) => c.path)).toEqual([ssh]);
    expect(plan(home, { inside: [gnupg] }).map((c) => c.path)).toEqual([ssh]);
    // a working directory that holds them (the home itself) does not keep them from being covered
    expect(plan(home, { protect: [home] }).map((c) => c.path)).toEqual([ssh, gnupg]);
  });

  it("covers a linked socket directory at its real path, and none inside another", () => {
    const home = join(work.path, "unit-link");
    const dotfiles = join(work.path, "unit-dotfiles");
    mkdirSync(join(dotfiles, "ssh", "gnupg"), { recursive: true });
    mkdirSync(home);
    symlinkSync(join(dotfiles, "ssh"), join(home, ".ssh"));
    symlinkSync(join(dotfiles, "ssh", "gnupg"), join(home, ".gnupg"));
    const covers = planSocketDirCovers({ env: { HOME: home }, covered: [], kept: [], protect: [], inside: [] });
    expect(covers.filter((c) => c.path.startsWith(work.path)).map((c) => c.path)).toEqual([join(dotfiles, "ssh")]);
  });

  it("copies no more than its limits, counting what it leaves out", async () => {
    const home = join(work.path, "unit-limits");
    await makeHome(home);
    const [ssh, gpg] = plan(home, { limits: { entries: 3, bytes: 1_000 } });
    expect(ssh?.entries.map((e) => e.path)).toEqual(["config", "d0", "hosts-link"]);
    expect(gpg?.entries).toEqual([]);
    expect((ssh?.leftOut ?? 0) + (gpg?.leftOut ?? 0)).toBeGreaterThan(0);
    const [small] = plan(home, { limits: { entries: 100, bytes: 10 } });
    expect(small?.entries.some((e) => e.path === "known_hosts")).toBe(false);
    expect(socketDirsLeftOut(plan(home, { limits: { entries: 3, bytes: 1_000 } }))).toMatch(
      new RegExp(
        `^acp run: \\d+ entries of \`${join(home, ".ssh")}\`, \`${join(home, ".gnupg")}\` are not in the sandbox: `,
      ),
    );
    expect(socketDirsLeftOut([])).toBeUndefined();
  });
});

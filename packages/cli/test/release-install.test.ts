/**
 * The released package (`npm run pack:release`) installed in place, as README.md's Install gives it for the
 * tested versions: unpacked, `npm install --omit=dev` in it (npm reads its npm-shrinkwrap.json as the lock
 * of that folder), then `npm install -g` of the folder puts acp on PATH. npm reads no shrinkwrap from a
 * package it installs from a file (npm/cli#5349), so `npm install -g acp-cli-*.tgz` (docs-shipped.test.ts)
 * takes the newest in range instead.
 *
 * The install runs the packages' install scripts, as a user's would: better-sqlite3's tries to download a
 * prebuilt binding (here there is no network to GitHub, so it fails at once) and then compiles one with
 * node-gyp against the local Node headers, which is what an offline user with a compiler gets. That takes a
 * minute; then the installed acp runs commands that open SQLite.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempRoot } from "./home-fixture.js";
import { NPM_INSTALL_OPTIONS, PACKAGE, packRelease, repositoryLock, run, type Run } from "./release-fixture.js";

const root = tempRoot("release-install");
// asynchronously: removing the installed tree takes seconds, and a blocked worker misses vitest's calls
afterAll(() => rm(root.dir, { recursive: true, force: true }), 120_000);

/** Where the package is unpacked and installed, and the global prefix whose bin/ links its acp. */
const folder = join(root.dir, "acp");
const prefix = join(root.dir, "prefix");
let tarball = "";
let install: Run = { code: null, stdout: "", stderr: "" };
let link: Run = { code: null, stdout: "", stderr: "" };

/** The installed acp, found on PATH, run (without blocking the worker) with a HOME and TMPDIR under the test's folder. */
function acp(env: Record<string, string>, ...args: string[]): Promise<Run> {
  const base = { PATH: `${join(prefix, "bin")}:${process.env["PATH"] ?? ""}`, HOME: root.dir, TMPDIR: root.dir };
  return run("acp", args, root.dir, { ...base, ...env });
}

/** The third-party packages installed under `dir`/node_modules, by path (`node_modules/a/node_modules/b`). */
function installedTree(dir: string, prefixPath = ""): Map<string, string> {
  const out = new Map<string, string>();
  const modules = join(dir, "node_modules");
  if (!existsSync(modules)) return out;
  for (const entry of readdirSync(modules)) {
    if (entry.startsWith(".")) continue;
    const names = entry.startsWith("@") ? readdirSync(join(modules, entry)).map((n) => `${entry}/${n}`) : [entry];
    for (const name of names) {
      if (prefixPath === "" && name.startsWith("@acp/")) continue;
      const path = `${prefixPath}node_modules/${name}`;
      const manifest = JSON.parse(readFileSync(join(modules, name, "package.json"), "utf8")) as { version: string };
      out.set(path, manifest.version);
      for (const [inner, version] of installedTree(join(modules, name), `${path}/`)) out.set(inner, version);
    }
  }
  return out;
}

/** The entries of the repository's lock for `path` of the package: at the root, or below a workspace. */
function locked<T>(lock: Record<string, T>, path: string): T[] {
  return Object.entries(lock)
    .filter(([at]) => at === path || /^packages\/[^/]+\/(.+)$/.exec(at)?.[1] === path)
    .map(([, entry]) => entry);
}

beforeAll(async () => {
  ({ tarball } = await packRelease(root.dir));
  mkdirSync(folder);
  const untar = spawnSync("tar", ["-xzf", tarball, "-C", folder, "--strip-components=1"], { encoding: "utf8" });
  if (untar.status !== 0) throw new Error(`tar failed: ${untar.stderr}`);
  install = await run("npm", ["install", "--omit=dev", ...NPM_INSTALL_OPTIONS], folder);
  link = await run("npm", ["install", "-g", folder, "--prefix", prefix, ...NPM_INSTALL_OPTIONS], root.dir);
}, 600_000);

describe("the release package installed in place gets the third-party versions the repository tested", () => {
  it("ships npm-shrinkwrap.json: each third-party package at the version and integrity of package-lock.json", () => {
    const carried = spawnSync("tar", ["-xzOf", tarball, "package/npm-shrinkwrap.json"], { encoding: "utf8" });
    expect(carried.status, carried.stderr).toBe(0);
    const shrinkwrap = JSON.parse(carried.stdout) as {
      packages: Record<string, { version?: string; integrity?: string; inBundle?: boolean }>;
    };
    const lock = repositoryLock();
    const entries = Object.entries(shrinkwrap.packages).filter(([path, e]) => path !== "" && e.inBundle !== true);
    expect(entries.length).toBeGreaterThan(100);
    for (const [path, entry] of entries) {
      const same = locked(lock, path).filter((e) => e.version === entry.version && e.integrity === entry.integrity);
      expect(same.length, `${path} ${entry.version}`).toBeGreaterThan(0);
    }
    // our own packages are carried, never fetched
    for (const [path, entry] of Object.entries(shrinkwrap.packages))
      if (path.includes("@acp/")) expect(entry.inBundle, path).toBe(true);
  });

  it("npm install in the unpacked package, with @acp/* sent to a registry that refuses, installs the lock's versions", () => {
    expect(install.code, install.stderr).toBe(0);
    expect(install.stderr).not.toContain("127.0.0.1:9");
    const lock = repositoryLock();
    const tree = installedTree(folder);
    expect(tree.size).toBeGreaterThan(100);
    const versions = (path: string): (string | undefined)[] => locked(lock, path).map((e) => e.version);
    for (const [path, version] of tree) expect(versions(path), `${path} ${version}`).toContain(version);
    // the packages the CLI asks for by range, each the one the checkout ran with
    const manifest = JSON.parse(readFileSync(join(PACKAGE, "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
    };
    for (const name of Object.keys(manifest.dependencies).filter((n) => !n.startsWith("@acp/")))
      expect(versions(`node_modules/${name}`), name).toContain(tree.get(`node_modules/${name}`));
    expect(tree.get("node_modules/better-sqlite3")).toBe(lock["node_modules/better-sqlite3"]?.version);
  });
});

describe("the installed acp runs for real", () => {
  it("better-sqlite3's install script gave it a native binding, and npm install -g of the folder puts acp on PATH", () => {
    expect(existsSync(join(folder, "node_modules", "better-sqlite3", "build", "Release", "better_sqlite3.node"))).toBe(
      true,
    );
    expect(link.code, link.stderr).toBe(0);
    expect(link.stderr).not.toContain("127.0.0.1:9");
    expect(realpathSync(join(prefix, "bin", "acp"))).toBe(join(realpathSync(folder), "bin", "acp.js"));
  });

  it("acp demo stops the injection with its state in SQLite; acp audit verify and acp pending read the home", async () => {
    const demo = await acp({}, "demo", "--keep", "--json");
    expect(demo.code, demo.stderr).toBe(0);
    const outcome = JSON.parse(demo.stdout) as {
      stopped: boolean;
      audit_intact: boolean;
      home: string;
      passphrase: string;
    };
    expect(outcome.stopped).toBe(true);
    expect(outcome.audit_intact).toBe(true);
    // kept below the test's TMPDIR, so removed with it
    expect(outcome.home.startsWith(root.dir)).toBe(true);
    expect(existsSync(join(outcome.home, "state.db"))).toBe(true);
    const home = { ACP_HOME: outcome.home, ACP_PASSPHRASE: outcome.passphrase };
    const verify = await acp(home, "audit", "verify");
    expect(verify.code, verify.stderr).toBe(0);
    expect(verify.stdout).toMatch(/intact: \d+ events/);
    const pending = await acp(home, "pending", "--json");
    expect(pending.code, pending.stderr).toBe(0);
    expect(JSON.parse(pending.stdout)).toEqual([]);
  }, 240_000);

  it("the framework-guard example runs from the installed package: its guard, vault and audit log", async () => {
    const example = await run("bash", [join(folder, "examples", "framework-guard", "run.sh")], root.dir, {
      PATH: process.env["PATH"] ?? "",
      HOME: root.dir,
      TMPDIR: root.dir,
    });
    expect(example.code, example.stderr).toBe(0);
    // agent.mjs imports @acp/cli/guard: the installed package itself, by its name
    expect(example.stdout).toMatch(/intact: \d+ events/);
    // the injected mail to the attacker asked and was denied; the bank got the token from the vault
    expect(example.stdout).toContain("✗ denied by a person");
    expect(example.stdout).toContain(
      'what the bank received: {"iban":"DE89370400440532013000","amount":"42.00","authorization":"tok_live_example_0042"}',
    );
  }, 240_000);

  it("acp init makes a home the installed acp then reads", async () => {
    const home = { ACP_HOME: join(root.dir, "home"), ACP_PASSPHRASE: "release-install-test" };
    const init = await acp(home, "init", "--json");
    expect(init.code, init.stderr).toBe(0);
    expect((JSON.parse(init.stdout) as { private_key_encrypted: boolean }).private_key_encrypted).toBe(true);
    const pending = await acp(home, "pending", "--json");
    expect(pending.code, pending.stderr).toBe(0);
    expect(JSON.parse(pending.stdout)).toEqual([]);
  }, 120_000);
});

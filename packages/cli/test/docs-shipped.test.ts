/**
 * The docs every --help points at are installed with acp: the package of @acp/cli ships docs/, every
 * `acp docs PAGE` a help or a message of acp names is a page in the package, no help names a repository
 * path (`docs/guides/proxy.md`) that an installed acp does not have, and `acp docs` run from the installed
 * package (not a checkout) prints the shipped pages. The package is the released one (`npm run pack:release`):
 * it carries our @acp/* packages, so installing it asks no registry for them.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Command } from "commander";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProgram } from "../src/main.js";
import { docsRoot, listDocsPages, matchDocsPages, type DocsPage } from "../src/help/docs-pages.js";
import { runCli, silentContext } from "./run.js";
import { tempRoot } from "./home-fixture.js";

const REPO = fileURLToPath(new URL("../../..", import.meta.url));
const PACKAGE = join(REPO, "packages", "cli");
const root = tempRoot("docs-shipped");
afterAll(root.cleanup);

function allCommands(command: Command, path: string[] = []): string[][] {
  return [path, ...command.commands.flatMap((sub) => allCommands(sub, [...path, sub.name()]))];
}

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith(".ts") ? [path] : [];
  });
}

/** Whether `page`, as `acp docs` resolves a name, is one page of the package. */
function isShipped(page: string): boolean {
  const pages: DocsPage[] = shipped
    .filter((f) => /^docs\/.+\.md$/.test(f))
    .map((f) => ({ name: f.slice("docs/".length, -".md".length), file: f, title: "" }));
  return matchDocsPages(pages, page).length === 1;
}

/** The pages `text` points at as `acp docs PAGE`. */
function pointers(text: string): string[] {
  return [...text.matchAll(/\bacp docs ([a-z0-9][\w/-]*[\w])/g)].map((m) => m[1] ?? "");
}

let shipped: string[] = [];
const helps = new Map<string, string>();
/** Where the released package is installed (`npm install -g` of its tarball, below `root`), and how that went. */
const prefix = join(root.dir, "installed");
const installed = join(prefix, "lib", "node_modules", "@acp", "cli");
let install: Run = { code: null, stdout: "", stderr: "" };
let tarball = "";

/** The installed acp, found on PATH as a user's shell would, run in a directory with no checkout above it. */
function acp(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const env = { PATH: `${join(prefix, "bin")}:${process.env["PATH"] ?? ""}`, HOME: root.dir };
  return spawnSync("acp", args, { cwd: root.dir, env, encoding: "utf8" });
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command without blocking the test worker (a pack and an install take tens of seconds). */
function run(command: string, args: string[], cwd: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

beforeAll(async () => {
  // the package as it is released (`npm run pack:release`), packed once for every test here
  const pack = await run(
    process.execPath,
    [join(PACKAGE, "scripts", "pack-release.mjs"), "--json", "--pack-destination", root.dir],
    PACKAGE,
  );
  if (pack.code !== 0) throw new Error(`pack-release failed:\n${pack.stderr}`);
  const [result] = JSON.parse(pack.stdout) as { filename: string; files: { path: string }[] }[];
  if (result === undefined) throw new Error("npm pack printed no package");
  shipped = result.files.map((f) => f.path);
  tarball = join(root.dir, result.filename);
  // installed as a user would, into a temporary global prefix. Third-party packages come from npm's cache
  // (the repository's install filled it) or the registry; an @acp/* name npm asked a registry for would go
  // to a closed loopback port and fail the install. No install scripts: better-sqlite3's native build is not
  // what this tests, and no command run here opens SQLite
  install = await run(
    "npm",
    [
      "install",
      "-g",
      tarball,
      "--prefix",
      prefix,
      "--prefer-offline",
      "--ignore-scripts",
      "--no-audit",
      "--no-fund",
      "--fetch-retries=0",
      "--@acp:registry=http://127.0.0.1:9/",
      "--loglevel=http",
    ],
    root.dir,
  );
  for (const path of allCommands(createProgram(silentContext())))
    helps.set(["acp", ...path].join(" "), (await runCli([...path, "--help"])).stdout);
}, 300_000);

describe("the docs a --help points at are installed with acp", () => {
  it("the package ships docs/ (every page of the repository's docs/) and leaves no copy in the checkout", () => {
    const pages = listDocsPages(join(REPO, "docs")).map((p) => `docs/${p.name}.md`);
    expect(pages.length).toBeGreaterThan(10);
    for (const page of pages) expect(shipped, page).toContain(page);
    expect(existsSync(join(PACKAGE, "docs"))).toBe(false);
  });

  it("ships what acp runs from, not the compiler's build state (dist/.tsbuildinfo)", () => {
    expect(shipped).toContain("bin/acp.js");
    expect(shipped).toContain("dist/main.js");
    expect(shipped).not.toContain("dist/.tsbuildinfo");
  });

  it("every help points at pages with `acp docs PAGE`, and each names one page of the package", () => {
    let named = 0;
    for (const [name, help] of helps)
      for (const page of pointers(help)) {
        named++;
        expect(isShipped(page), `${name} --help names \`acp docs ${page}\``).toBe(true);
      }
    // the root help, proxy, serve, run, check, … all point somewhere
    expect(named).toBeGreaterThan(15);
  });

  it("every `acp docs PAGE` in acp's sources (messages as well as helps) names one page of the package", () => {
    for (const file of sources(join(PACKAGE, "src")))
      for (const page of pointers(readFileSync(file, "utf8")))
        expect(isShipped(page), `${file} names \`acp docs ${page}\``).toBe(true);
  });

  it("no help names a repository path (docs/….md) an installed acp has no file at", () => {
    for (const [name, help] of helps) {
      // `acp docs --help` says it also takes a page written as a path
      if (name === "acp docs") continue;
      expect(help, name).not.toMatch(/(^|[\s(,])docs\/[\w/.-]+\.md/m);
    }
  });

  it("acp docs, run from the installed package, reads the pages it ships", () => {
    const page = acp("docs", "guides/proxy");
    expect(page.status, page.stderr).toBe(0);
    expect(page.stdout).toBe(readFileSync(join(REPO, "docs", "guides", "proxy.md"), "utf8"));
    const path = acp("docs", "guides/proxy", "--path");
    expect(path.stdout.trim()).toBe(join(installed, "docs", "guides", "proxy.md"));
    const list = acp("docs");
    expect(list.status).toBe(0);
    expect(list.stdout).toMatch(/^reference\/cli\/docs +`?acp docs`?$/m);
  });
});

describe("the released package installs on its own, asking no registry for an @acp/* package", () => {
  const ours = ["claim", "core", "proxy", "server", "store"];

  it("carries @acp/claim, core, proxy, server and store, and no third-party package", () => {
    for (const name of ours) expect(shipped).toContain(`node_modules/@acp/${name}/dist/index.js`);
    expect(shipped.filter((p) => p.startsWith("node_modules/") && !p.startsWith("node_modules/@acp/"))).toEqual([]);
  });

  it("npm install -g of it, with @acp/* sent to a registry that refuses, gives an acp that runs", () => {
    expect(install.code, install.stderr).toBe(0);
    expect(install.stderr).not.toContain("127.0.0.1:9");
    // our packages are the ones the package carries, not some registry's
    for (const name of ours) {
      const file = `node_modules/@acp/${name}/dist/index.js`;
      const carried = spawnSync("tar", ["-xzOf", tarball, `package/${file}`], { encoding: "utf8" });
      expect(carried.status, carried.stderr).toBe(0);
      expect(readFileSync(join(installed, file), "utf8"), name).toBe(carried.stdout);
    }
    // --version loads every command, so every bundled package and each third-party package they import
    const version = acp("--version");
    expect(version.status, version.stderr).toBe(0);
    const manifest = JSON.parse(readFileSync(join(PACKAGE, "package.json"), "utf8")) as { version: string };
    expect(version.stdout.trim()).toBe(manifest.version);
  });

  it("a plain npm pack of packages/cli is refused, pointing at npm run pack:release", () => {
    const pack = spawnSync("npm", ["pack", "--dry-run"], { cwd: PACKAGE, encoding: "utf8" });
    expect(pack.status).not.toBe(0);
    expect(pack.stderr).toContain("npm run pack:release");
  });
});

describe("acp docs", () => {
  it("lists every page with its title", async () => {
    const out = await runCli(["docs"]);
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/^guides\/proxy +\S/m);
    expect(out.stdout).toMatch(/^reference\/errors +\S/m);
  });

  it("prints a page named in full, as a repository path, or by a last part only it has", async () => {
    const text = readFileSync(join(REPO, "docs", "guides", "sandbox.md"), "utf8");
    for (const name of ["guides/sandbox", "docs/guides/sandbox.md", "sandbox", "guides/sandbox.md#egress"]) {
      const out = await runCli(["docs", name]);
      expect(out.code, name).toBe(0);
      expect(out.stdout, name).toBe(text);
    }
  });

  it("a last part several pages share is usage (2), listing them", async () => {
    const out = await runCli(["docs", "proxy"]);
    expect(out.code).toBe(2);
    expect(out.stderr).toBe(
      "acp: `proxy` names several pages: guides/proxy, reference/cli/proxy (give the whole name)\n",
    );
  });

  it("an unknown page is usage (2), with the nearest name", async () => {
    const out = await runCli(["docs", "guides/proxi"]);
    expect(out.code).toBe(2);
    expect(out.stderr).toBe("acp: no page `guides/proxi` (did you mean `guides/proxy`?): `acp docs` lists them\n");
  });

  it("never reads a file outside the docs, whatever the name", async () => {
    for (const name of ["../package.json", "../../README", "/etc/passwd", "guides/../../README"]) {
      const out = await runCli(["docs", name]);
      expect(out.code, name).toBe(2);
      expect(out.stdout, name).toBe("");
    }
  });

  it("--json prints the list and the page as JSON", async () => {
    const list = JSON.parse((await runCli(["docs", "--json"])).stdout) as { name: string; title: string }[];
    expect(list).toContainEqual(expect.objectContaining({ name: "reference/cli", title: "acp command reference" }));
    const page = JSON.parse((await runCli(["docs", "errors", "--json"])).stdout) as { name: string; text: string };
    expect(page.name).toBe("reference/errors");
    expect(page.text).toBe(readFileSync(join(REPO, "docs", "reference", "errors.md"), "utf8"));
  });

  it("finds no docs where a package holds none, and the checkout's beside a linked package", () => {
    const bare = join(root.dir, "bare", "a", "b");
    mkdirSync(bare, { recursive: true });
    expect(docsRoot(bare)).toBeUndefined();
    expect(docsRoot(PACKAGE)).toBe(join(PACKAGE, "..", "..", "docs"));
  });
});

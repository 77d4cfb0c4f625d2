/**
 * The docs every --help points at are installed with acp: the package of @acp/cli ships docs/, every
 * `acp docs PAGE` a help or a message of acp names is a page in the package, no help names a repository
 * path (`docs/guides/proxy.md`) that an installed acp does not have, and `acp docs` run from the installed
 * package (not a checkout) prints the shipped pages. The package is the released one (`npm run pack:release`):
 * it carries our @acp/* packages, so installing it asks no registry for them.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { rm } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import type { Command } from "commander";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProgram } from "../src/main.js";
import { docsRoot, listDocsPages, matchDocsPages, type DocsPage } from "../src/help/docs-pages.js";
import { runCli, silentContext } from "./run.js";
import { tempRoot } from "./home-fixture.js";
import { BUNDLED, NPM_INSTALL_OPTIONS, PACKAGE, packRelease, REPO, run, type Run } from "./release-fixture.js";

const root = tempRoot("docs-shipped");
// asynchronously: removing the installed tree takes seconds, and a blocked worker misses vitest's calls
afterAll(() => rm(root.dir, { recursive: true, force: true }), 120_000);

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

/** The relative links (`[text](path#section)`) of a Markdown page, as written. */
function relativeLinks(text: string): string[] {
  return [...text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)]
    .map((m) => m[1] ?? "")
    .filter((href) => !/^[a-z][a-z0-9+.-]*:/i.test(href) && !href.startsWith("#"));
}

beforeAll(async () => {
  // the package as it is released (`npm run pack:release`), packed once for every test here
  ({ tarball, files: shipped } = await packRelease(root.dir));
  // installed as a user would, into a temporary global prefix (NPM_INSTALL_OPTIONS: an @acp/* name asked of a
  // registry fails the install). No install scripts: better-sqlite3's native build is what
  // release-install.test.ts runs, and no command run here opens SQLite
  install = await run(
    "npm",
    ["install", "-g", tarball, "--prefix", prefix, "--ignore-scripts", ...NPM_INSTALL_OPTIONS],
    root.dir,
  );
  for (const path of allCommands(await createProgram(silentContext())))
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
  const ours = BUNDLED;

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

describe("what the released package ships", () => {
  /** The Markdown pages it ships: `acp docs` pages, the examples' READMEs, README.md, … (not its packages'). */
  const pages = (): string[] => shipped.filter((f) => f.endsWith(".md") && !f.startsWith("node_modules/"));

  it("every relative link of a page it ships (docs/, examples/, README.md, …) leads to a file of the installed package", () => {
    const targets = new Set<string>();
    for (const page of pages())
      for (const href of relativeLinks(readFileSync(join(installed, page), "utf8"))) {
        const target = resolve(dirname(join(installed, page)), decodeURIComponent(href.split("#")[0] ?? ""));
        const inside = relative(installed, target);
        expect(inside.startsWith("..") || inside.startsWith("/"), `${page} links outside the package: ${href}`).toBe(
          false,
        );
        expect(existsSync(target), `${page} links to ${href}, which the package does not have`).toBe(true);
        targets.add(inside.split("/")[0] ?? "");
      }
    // the pages link to the examples and the spec files as well as to each other
    expect(pages()).toEqual(
      expect.arrayContaining(["README.md", "docs/guides/proxy.md", "examples/attacks/README.md"]),
    );
    expect([...targets].sort()).toEqual(expect.arrayContaining(["docs", "examples", "spec"]));
  });

  it("ships the examples/ and spec/ files the pages run commands on", () => {
    for (const file of [
      "examples/attacks/policy.yml",
      "examples/attacks/intents/calendar-read.json",
      "examples/verify/good/policy.yml",
      "examples/policy-tour/policy.test.yml",
      "examples/docker/acp-forward.mjs",
      "spec/examples/consent-graph.json",
      "spec/schemas/consent-request.schema.json",
    ])
      expect(shipped, file).toContain(file);
    // and a command a page gives (docs/reference/cli/graph-check.md) works on them from the installed package
    const graph = join(installed, "spec", "examples", "consent-graph.json");
    const check = acp("graph", "check", "email", "read", "--graph", graph);
    expect(check.status, check.stderr).toBe(3);
    expect(check.stdout).toMatch(/^FORCED -- ask first: `email.read` requires approval/);
  });

  it("the policy tour runs from the installed package as from the checkout", async () => {
    const tour = (dir: string): Promise<Run> =>
      run("bash", [join(dir, "examples", "policy-tour", "tour.sh")], root.dir, {
        PATH: process.env["PATH"] ?? "",
        HOME: root.dir,
      });
    const installedRun = await tour(installed);
    expect(installedRun.code, installedRun.stderr).toBe(0);
    expect(installedRun.stdout).toContain("1. A policy is checked before it is used");
    expect(installedRun.stdout).toBe((await tour(REPO)).stdout);
  }, 240_000);

  it("ships LICENSE, README.md and npm-shrinkwrap.json, with a LICENSE in each package it carries", () => {
    for (const file of ["LICENSE", "README.md", "npm-shrinkwrap.json"]) expect(shipped, file).toContain(file);
    for (const name of BUNDLED) expect(shipped).toContain(`node_modules/@acp/${name}/LICENSE`);
    expect(readFileSync(join(installed, "LICENSE"), "utf8")).toBe(readFileSync(join(REPO, "LICENSE"), "utf8"));
  });

  it("ships no tests, no build state and no build output of a source since removed", () => {
    expect(shipped.filter((f) => /(^|\/)(test|tests|__tests__|test-artifacts)\/|\.test\.[cm]?[jt]s$/.test(f))).toEqual(
      [],
    );
    expect(shipped.filter((f) => f.endsWith(".tsbuildinfo"))).toEqual([]);
    // the CLI's bundle (what bin/acp.js runs) has no source of its own: it is made anew by each build
    const orphans = shipped.filter((f) => {
      const [, at, rel] = /^(|node_modules\/@acp\/[^/]+\/)dist\/(.+)\.(?:d\.ts\.map|d\.ts|js\.map|js)$/.exec(f) ?? [];
      return rel !== undefined && !(at === "" && rel.startsWith("bundle/")) && !shipped.includes(`${at}src/${rel}.ts`);
    });
    expect(orphans).toEqual([]);
    expect(shipped).toContain("dist/bundle/entry.js");
  });

  it("every source map it ships points at sources it ships", () => {
    const maps = shipped.filter((f) => f.endsWith(".map"));
    expect(maps.length).toBeGreaterThan(100);
    for (const map of maps) {
      const { sources: files, sourceRoot } = JSON.parse(readFileSync(join(installed, map), "utf8")) as {
        sources: string[];
        sourceRoot?: string;
      };
      for (const source of files) {
        const target = resolve(dirname(join(installed, map)), sourceRoot ?? "", source);
        expect(existsSync(target), `${map} points at ${source}`).toBe(true);
      }
    }
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

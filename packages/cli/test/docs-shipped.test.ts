/**
 * The docs every --help points at are installed with acp: `npm pack` of @acp/cli ships docs/, every
 * `acp docs PAGE` a help or a message of acp names is a page in the package, no help names a repository
 * path (`docs/guides/proxy.md`) that an installed acp does not have, and `acp docs` run from the unpacked
 * package (not a checkout) prints the shipped pages.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync } from "node:fs";
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
let unpacked = "";
const helps = new Map<string, string>();

beforeAll(async () => {
  const pack = spawnSync("npm", ["pack", "--json", "--pack-destination", root.dir], {
    cwd: PACKAGE,
    encoding: "utf8",
  });
  if (pack.status !== 0) throw new Error(`npm pack failed:\n${pack.stderr}`);
  const [result] = JSON.parse(pack.stdout) as { filename: string; files: { path: string }[] }[];
  if (result === undefined) throw new Error("npm pack printed no package");
  shipped = result.files.map((f) => f.path);
  // two levels below the temporary root, so the checkout's `../../docs` is not there to be found instead;
  // the package's dependencies come from the repository's node_modules, as an install would provide them
  const at = join(root.dir, "prefix", "lib");
  mkdirSync(at, { recursive: true });
  const untar = spawnSync("tar", ["-xzf", join(root.dir, result.filename), "-C", at], { encoding: "utf8" });
  if (untar.status !== 0) throw new Error(`tar failed:\n${untar.stderr}`);
  symlinkSync(join(REPO, "node_modules"), join(root.dir, "node_modules"));
  unpacked = join(at, "package");
  for (const path of allCommands(createProgram(silentContext())))
    helps.set(["acp", ...path].join(" "), (await runCli([...path, "--help"])).stdout);
}, 300_000);

describe("the docs a --help points at are installed with acp", () => {
  it("npm pack ships docs/ (every page of the repository's docs/) and leaves no copy in the checkout", () => {
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

  it("acp docs, run from the unpacked package, reads the pages it ships", () => {
    const acp = (args: string[]): { status: number | null; stdout: string; stderr: string } =>
      spawnSync(process.execPath, [join(unpacked, "bin", "acp.js"), ...args], {
        cwd: root.dir,
        env: { PATH: process.env["PATH"] ?? "", HOME: root.dir },
        encoding: "utf8",
      });
    const page = acp(["docs", "guides/proxy"]);
    expect(page.status, page.stderr).toBe(0);
    expect(page.stdout).toBe(readFileSync(join(REPO, "docs", "guides", "proxy.md"), "utf8"));
    const path = acp(["docs", "guides/proxy", "--path"]);
    expect(path.stdout.trim()).toBe(join(unpacked, "docs", "guides", "proxy.md"));
    const list = acp(["docs"]);
    expect(list.status).toBe(0);
    expect(list.stdout).toMatch(/^reference\/cli\/docs +`?acp docs`?$/m);
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

// Builds the installable acp package: a tarball of @acp/cli that carries our own packages (@acp/core, store,
// proxy, server, claim) inside it, so installing it never asks a registry for an @acp/* name — those names
// are not ours on the public registry, and whatever sits there must not be installed in our place.
//
//   node scripts/pack-release.mjs [--pack-destination DIR] [--json]     (npm run pack:release)
//
// prints the tarball's path (or npm pack's JSON); the tarball installs with `npm install -g acp-cli-*.tgz`.
//
// A plain `npm pack` here cannot do this: npm does not bundle workspace packages hoisted to the repository's
// node_modules (npm/cli#3466, npm/npm-packlist#101), and bundling from the checkout would also take in the
// third-party packages they depend on. So the package is staged in a temporary folder, outside the checkout:
// the CLI's files (bin, dist, src and the repository's docs/, examples/, spec/, …), each @acp/* package's
// own files under node_modules/@acp/, a manifest that bundles the @acp/* packages and lists, as ordinary
// dependencies, the third-party packages the CLI and the bundled packages need (npm installs no dependency of
// a bundled package: it expects them in the bundle, so the bundled manifests keep only their @acp/* ones),
// and an npm-shrinkwrap.json with the third-party versions of the repository's package-lock.json
// (shrinkwrap.mjs). Then `npm pack` of that folder, which is checked: the only node_modules entries in the
// tarball are the bundled @acp/* packages, and the shrinkwrap is in it. The checkout is not changed.
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { buildShrinkwrap } from "./shrinkwrap.mjs";

const REPO = fileURLToPath(new URL("../../..", import.meta.url));
const OURS = "@acp/";

class PackError extends Error {}

function fail(message) {
  throw new PackError(message);
}

function readJson(path) {
  return JSON.parse(readFileSync(path, "utf8"));
}

function parseArgs(argv) {
  // npm run sets the working directory to the package; INIT_CWD is where the command was typed
  const typedIn = process.env["INIT_CWD"] ?? process.cwd();
  const args = { destination: typedIn, json: false };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--json") args.json = true;
    else if (argv[i] === "--pack-destination" && argv[i + 1] !== undefined)
      args.destination = resolve(typedIn, argv[++i]);
    else {
      console.error("usage: node scripts/pack-release.mjs [--pack-destination DIR] [--json]");
      process.exit(2);
    }
  }
  return args;
}

/** The repository's workspaces by package name: their folder and manifest. */
function workspaces() {
  const root = readJson(join(REPO, "package.json"));
  const byName = new Map();
  for (const folder of root.workspaces ?? []) {
    const dir = join(REPO, folder);
    const manifest = readJson(join(dir, "package.json"));
    byName.set(manifest.name, { dir, manifest });
  }
  return byName;
}

/** The @acp/* packages the CLI needs, directly or through another, each the workspace of that version. */
function ourPackages(cli, byName) {
  const found = new Map();
  const pending = [cli];
  while (pending.length > 0) {
    const manifest = pending.pop();
    for (const [name, range] of Object.entries(manifest.dependencies ?? {})) {
      if (!name.startsWith(OURS) || found.has(name)) continue;
      const workspace = byName.get(name);
      if (workspace === undefined)
        fail(`${manifest.name} depends on ${name}, which is no workspace of this repository`);
      if (range !== workspace.manifest.version)
        fail(`${manifest.name} depends on ${name} ${range}, but the workspace is ${workspace.manifest.version}`);
      if (!existsSync(join(workspace.dir, workspace.manifest.main ?? "dist/index.js")))
        fail(`${name} is not built (no ${workspace.manifest.main}): run npm run build first`);
      found.set(name, workspace);
      pending.push(workspace.manifest);
    }
  }
  return found;
}

/** The third-party dependencies of the CLI and every bundled package, one range per name. */
function thirdParty(manifests) {
  const ranges = {};
  const from = {};
  for (const manifest of manifests)
    for (const [name, range] of Object.entries(manifest.dependencies ?? {})) {
      if (name.startsWith(OURS)) continue;
      if (ranges[name] !== undefined && ranges[name] !== range)
        fail(`${name} is ${ranges[name]} in ${from[name]} but ${range} in ${manifest.name}: make them one range`);
      ranges[name] = range;
      from[name] = manifest.name;
    }
  return Object.fromEntries(Object.entries(ranges).sort(([a], [b]) => a.localeCompare(b)));
}

/**
 * Whether `path`, in a package's dist/, is what the compiler made from a source file since removed. The CLI's
 * bundle (dist/bundle/, what `bin/acp.js` runs) has no source file of its own: each build makes it anew.
 */
function staleOutput(dir, path) {
  const [, rel] = /^dist[\\/](.+)\.(?:d\.ts\.map|d\.ts|js\.map|js)$/.exec(relative(dir, path)) ?? [];
  if (rel === undefined || /^bundle[\\/]/.test(rel)) return false;
  return existsSync(join(dir, "src")) && !existsSync(join(dir, "src", `${rel}.ts`));
}

/**
 * Copies what `files` of a package's manifest names from `dir` to `to`, with its README.md and LICENSE; not the
 * compiler's build state (.tsbuildinfo) nor what it left in dist/ of a source file since removed (nothing
 * imports it, and its source map would point at nothing). `sources` names another place for an entry.
 */
function copyFiles(dir, manifest, to, sources = {}) {
  for (const entry of manifest.files ?? []) {
    if (entry.startsWith("!")) continue;
    const from = sources[entry] ?? join(dir, entry);
    if (!existsSync(from)) fail(`${manifest.name} lists ${entry} in files, but ${from} does not exist`);
    cpSync(from, join(to, entry), {
      recursive: true,
      dereference: false,
      filter: (path) => !path.endsWith(".tsbuildinfo") && !staleOutput(dir, path),
    });
  }
  for (const name of ["README.md", "LICENSE"]) {
    const from = sources[name] ?? join(dir, name);
    if (existsSync(from)) cpSync(from, join(to, name));
  }
}

/** A manifest as it ships: no scripts (nothing runs at install) and no development dependencies. */
function shipped(manifest, extra = {}) {
  const copy = { ...manifest, ...extra };
  delete copy.scripts;
  delete copy.devDependencies;
  return copy;
}

/** npm's environment, less what the caller's npm set for its workspace (this pack is of the staged folder). */
function npmEnv() {
  const env = { ...process.env };
  for (const key of Object.keys(env))
    if (/^npm_config_(workspaces?|include_workspace_root|prefix|global|json|pack_destination|dry_run)$/i.test(key))
      delete env[key];
  return env;
}

/** Stages the package in `stage` and packs it to `destination`; returns npm pack's JSON. */
function packRelease(stage, destination) {
  const cliDir = join(REPO, "packages", "cli");
  const cli = readJson(join(cliDir, "package.json"));
  const ours = ourPackages(cli, workspaces());
  const bundled = [...ours.keys()].sort();
  const docs = join(REPO, "docs");
  if (!existsSync(join(docs, "reference", "cli.md"))) fail(`no docs at ${docs}: run this from the repository`);
  // the repository's docs/ (acp docs, every --help) and what its pages link to and run commands on: examples/,
  // spec/, the measurements of bench/README.md, CONTRIBUTING.md and SECURITY.md; its README.md and LICENSE
  const fromRepo = (...names) => Object.fromEntries(names.map((name) => [name, join(REPO, name)]));
  const repoFiles = [
    "docs",
    "examples",
    "spec",
    "bench/README.md",
    "CONTRIBUTING.md",
    "SECURITY.md",
    "README.md",
    "LICENSE",
  ];
  copyFiles(cliDir, cli, stage, fromRepo(...repoFiles));
  for (const [name, { dir, manifest }] of ours) {
    const to = join(stage, "node_modules", name);
    copyFiles(dir, manifest, to, fromRepo("LICENSE"));
    // its third-party dependencies are the CLI's (below), where node finds them from node_modules/@acp/*: npm
    // takes what a bundled package depends on to be in the bundle too, and would leave those folders empty
    const own = Object.fromEntries(Object.entries(manifest.dependencies ?? {}).filter(([dep]) => dep.startsWith(OURS)));
    writeFileSync(join(to, "package.json"), `${JSON.stringify(shipped(manifest, { dependencies: own }), null, 2)}\n`);
  }
  const dependencies = {
    ...thirdParty([cli, ...[...ours.values()].map((w) => w.manifest)]),
    ...Object.fromEntries(bundled.map((name) => [name, cli.dependencies?.[name] ?? ours.get(name).manifest.version])),
  };
  // npm pack leaves a shrinkwrap out unless `files` names it
  const files = [...cli.files, "npm-shrinkwrap.json"];
  const manifest = shipped(cli, { files, dependencies, bundleDependencies: bundled });
  writeFileSync(join(stage, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  // the third-party versions the repository's lock gave, so an install gets what was tested
  const declarers = [
    { dir: relative(REPO, cliDir), manifest: cli },
    ...[...ours.values()].map(({ dir, manifest: m }) => ({ dir: relative(REPO, dir), manifest: m })),
  ];
  const carried = new Map(bundled.map((name) => [name, readJson(join(stage, "node_modules", name, "package.json"))]));
  const lock = buildShrinkwrap(readJson(join(REPO, "package-lock.json")), manifest, declarers, carried, fail);
  writeFileSync(join(stage, "npm-shrinkwrap.json"), `${JSON.stringify(lock, null, 2)}\n`);

  const pack = spawnSync("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", destination], {
    cwd: stage,
    env: npmEnv(),
    encoding: "utf8",
  });
  if (pack.status !== 0) fail(`npm pack failed:\n${pack.stderr}`);
  const results = JSON.parse(pack.stdout);
  const result = results[0];
  const tarball = join(destination, result.filename);
  // the tarball holds our bundled packages and nothing else under node_modules
  const stray = result.files
    .map((f) => f.path)
    .filter((path) => path.startsWith("node_modules/"))
    .filter((path) => {
      const [, name, rest] = /^node_modules\/(@[^/]+\/[^/]+)\/(.+)$/.exec(path) ?? [];
      return name === undefined || !bundled.includes(name) || rest.includes("node_modules/");
    });
  const missing = bundled.filter((name) => !(result.bundled ?? []).includes(name));
  if (!result.files.some((f) => f.path === "npm-shrinkwrap.json")) missing.push("npm-shrinkwrap.json");
  if (stray.length > 0 || missing.length > 0) {
    rmSync(tarball, { force: true });
    fail(
      `the tarball is not as staged: bundles ${result.bundled}, missing ${missing.join(", ")}, ` +
        `stray files ${stray.slice(0, 5).join(", ")}`,
    );
  }
  return results;
}

// `npm pack` or `npm publish` of packages/cli itself (its prepack): refused, as what it would make depends on
// @acp/* packages only a registry could provide
if (process.argv[2] === "--refuse-plain-pack") {
  console.error(
    "pack-release: a plain npm pack (or publish) of @acp/cli would make a package that asks the registry for " +
      "@acp/core, @acp/store, …; build the package that carries them with `npm run pack:release` " +
      "(CONTRIBUTING.md, Release)",
  );
  process.exit(1);
}

const args = parseArgs(process.argv.slice(2));
const stage = mkdtempSync(join(tmpdir(), "acp-pack-"));
try {
  const results = packRelease(stage, args.destination);
  if (args.json) process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
  else console.log(join(args.destination, results[0].filename));
} catch (error) {
  if (!(error instanceof PackError)) throw error;
  console.error(`pack-release: ${error.message}`);
  process.exitCode = 1;
} finally {
  rmSync(stage, { recursive: true, force: true });
}

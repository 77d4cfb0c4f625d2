#!/usr/bin/env node
// Bundles the built `acp` program (packages/cli/dist/entry.js) into packages/cli/dist/bundle/: the entry
// and one chunk per lazily loaded command, with the workspace packages and their dependencies inside, so
// that an `acp` start resolves and compiles a few files instead of ~700 modules (about half its start-up;
// docs/reference/cli.md, "Start-up"). Run by `npm run build` after `tsc -b`.
//
// Left outside, loaded from node_modules as they are: native addons and packages found at run time
// (ALWAYS_OUTSIDE), and every package with a module that finds files relative to itself (`__dirname`,
// `__filename`, `import.meta.url`, `require.resolve`: pino's workers, @fastify/swagger-ui's pages), found by
// reading what a first pass would bundle: bundled, such a module would look for its files next to the bundle.
// Our own modules that do (the demo's servers, `acp docs`' pages, the demo's own `acp`) name paths that lead
// to the same place from dist/<dir>/ and from dist/bundle/, one level below dist/ both; the console finds its
// files through its package's name.
import { readFileSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const CLI = fileURLToPath(new URL("../packages/cli/", import.meta.url));
const OUT = `${CLI}dist/bundle`;
const ALWAYS_OUTSIDE = ["better-sqlite3", "pg", "pg-native", "playwright-core"];
const FINDS_ITS_FILES = /__dirname|__filename|import\.meta\.(url|dirname|filename)|require\.resolve\b/;

const options = (external, write) => ({
  entryPoints: { entry: `${CLI}dist/entry.js` },
  outdir: OUT,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  external,
  // bundled CommonJS dependencies call `require` for Node's own modules: give the ES module one
  banner: {
    js: 'import { createRequire as __acpRequire } from "node:module"; const require = __acpRequire(import.meta.url);',
  },
  // no source maps: the chunks are readable JavaScript (not minified, names kept) and a map would point
  // at sources a release does not ship; licence comments stay at each file's end
  sourcemap: false,
  legalComments: "eof",
  metafile: !write,
  write,
  logLevel: "warning",
});

const probe = await build(options(ALWAYS_OUTSIDE, false));
const outside = new Set(ALWAYS_OUTSIDE);
for (const input of Object.keys(probe.metafile.inputs)) {
  const pkg = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input)?.[1];
  if (pkg !== undefined && !outside.has(pkg) && FINDS_ITS_FILES.test(readFileSync(input, "utf8"))) outside.add(pkg);
}
rmSync(OUT, { recursive: true, force: true });
const result = await build(options([...outside].sort(), true));
if (result.errors.length > 0) process.exit(1);
if (process.env.ACP_BUNDLE_VERBOSE === "1") console.log(`bundled; left outside: ${[...outside].sort().join(", ")}`);

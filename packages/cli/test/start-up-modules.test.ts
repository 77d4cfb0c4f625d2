/**
 * `acp` loads the code of the command it runs, not of every command: `acp pending` or `acp approve` from
 * another terminal starts without the MCP SDK, the service's HTTP stack or the proxy, which each `acp`
 * process loaded before (about 900 modules, a second of start-up). The built acp runs with a module hook
 * that records every module it resolves, the command doing its real work where a fixture home allows: its
 * modules one by one (`dist/entry.js`), and the bundle `bin/acp.js` runs (scripts/bundle-cli.mjs), which must
 * be the whole program (no workspace module loaded beside it: two copies of a class break `instanceof`) and
 * keep each command's code in the command's own files.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import type { Command } from "commander";
import { createProgram } from "../src/main.js";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";
import { moduleHook } from "./module-hook.js";
import { silentContext } from "./run.js";

const ACP = fileURLToPath(new URL("../bin/acp.js", import.meta.url));
const ENTRY = fileURLToPath(new URL("../dist/entry.js", import.meta.url));
const root = tempRoot("start-up-modules");
afterAll(root.cleanup);

// the hook appends each resolved URL to the file named in the environment
const register = moduleHook(
  root.dir,
  "module-log",
  `  const resolved = await next(specifier, context);\n` +
    `  appendFileSync(process.env.MODULE_LOG, resolved.url + "\\n");\n` +
    `  return resolved;`,
  `import { appendFileSync } from "node:fs";\n`,
);

let n = 0;
/**
 * Runs the built `acp ARGS` in `home` (its modules one by one, or `bin/acp.js` with `bundled`) and returns the
 * URLs of the modules it resolved, and its exit code.
 */
async function modulesOf(
  args: readonly string[],
  home: string,
  bundled = false,
): Promise<{ code: number | null; urls: string[] }> {
  const log = join(root.dir, `modules-${++n}.txt`);
  writeFileSync(log, "");
  const child = spawn(process.execPath, ["--import", register, bundled ? ACP : ENTRY, ...args], {
    env: { ...process.env, ...envFor(home), MODULE_LOG: log },
    stdio: ["ignore", "ignore", "ignore"],
  });
  const [code] = (await once(child, "exit")) as [number | null];
  return { code, urls: readFileSync(log, "utf8").split("\n").filter(Boolean) };
}

/** What only a running proxy or service needs: the MCP SDK, the HTTP server, the packages' full indexes. */
const HEAVY = [
  /\/node_modules\/@modelcontextprotocol\/sdk\//,
  /\/node_modules\/fastify\//,
  /\/packages\/proxy\/dist\/index\.js$/,
  /\/packages\/server\/dist\/index\.js$/,
];
const heavyIn = (urls: readonly string[]): string[] => [...new Set(urls.filter((u) => HEAVY.some((h) => h.test(u))))];

/** Commands that need neither the MCP SDK nor the service, with the exit codes they may end with here. */
const COMMANDS = [
  [["--version"], [0]],
  [["pending", "--json"], [0]],
  [
    ["approve", "cr_0000000000000000000000"],
    [1, 3, 4],
  ],
  [
    ["deny", "cr_0000000000000000000000"],
    [1, 3, 4],
  ],
  [
    ["audit", "verify"],
    [0, 1, 3],
  ],
  [
    ["audit", "tail"],
    [0, 1],
  ],
  [
    ["policy", "simulate", "--tool", "send_email", "--args", '{"to":"a@example.com"}'],
    [0, 3],
  ],
  [
    ["graph", "check", "email", "send", "0.9"],
    [0, 1, 3, 4],
  ],
  [["vault", "list"], [0]],
  [["doctor"], [0, 1]],
  [["init", "--help"], [0]],
  [["config", "set-secret", "--help"], [0]],
  [["console-link", "--help"], [0]],
  [["docs"], [0]],
] as const;

describe("each acp command loads only what it needs", () => {
  const { home } = fixtureHome(root.dir);

  it.each(COMMANDS)("acp %j loads neither the MCP SDK nor the service", async (args, codes) => {
    const { code, urls } = await modulesOf(args, home);
    expect(codes, `exit code ${code}`).toContain(code);
    // the hook saw the program's own modules (`--version` loads little else)
    expect(urls.some((u) => u.endsWith("/packages/cli/dist/main.js"))).toBe(true);
    expect(heavyIn(urls)).toEqual([]);
  });

  it("the hook sees those modules where a command needs them (acp proxy --help loads the MCP SDK)", async () => {
    const { code, urls } = await modulesOf(["proxy", "--help"], home);
    expect(code).toBe(0);
    expect(heavyIn(urls).some((u) => u.includes("@modelcontextprotocol/sdk"))).toBe(true);
    expect(heavyIn(urls).some((u) => u.endsWith("/packages/proxy/dist/index.js"))).toBe(true);
  });
});

/** Every command of `cmd`, by path, with its help as `acp PATH --help` prints it. */
function helps(cmd: Command, path: readonly string[] = []): Map<string, string> {
  const out = new Map<string, string>([[path.join(" "), cmd.helpInformation()]]);
  for (const sub of cmd.commands) for (const [at, help] of helps(sub, [...path, sub.name()])) out.set(at, help);
  return out;
}

/** Text only the MCP SDK's code holds, and only the service's (its HTTP server). */
const SDK_MARK = "LATEST_PROTOCOL_VERSION =";
const SERVICE_MARK = "fastify";
/** The bundle's files among `urls` (the entry and the chunks it loaded), with their text. */
const bundleFiles = (urls: readonly string[]): { url: string; text: string }[] =>
  urls
    .filter((u) => u.includes("/packages/cli/dist/bundle/"))
    .map((url) => ({ url, text: readFileSync(fileURLToPath(url), "utf8") }));
/**
 * What the bundled acp loaded of the workspace's own builds, or of the packages the bundle holds (the MCP SDK,
 * zod), from elsewhere than the bundle: a second copy beside the bundle's (its classes not the bundle's, for
 * `instanceof`). The packages the bundle leaves out (scripts/bundle-cli.mjs) load from node_modules.
 */
const outsideBundle = (urls: readonly string[]): string[] =>
  urls.filter(
    (u) =>
      (/\/packages\/[^/]+\/(dist|src)\//.test(u) && !u.includes("/packages/cli/dist/bundle/")) ||
      /\/node_modules\/(@modelcontextprotocol\/sdk|zod|yaml|ajv)\//.test(u),
  );

describe("the bundled acp (bin/acp.js)", () => {
  const { home } = fixtureHome(root.dir);

  it.each(COMMANDS)(
    "acp %j runs from the bundle alone, without the SDK's or the service's code",
    async (args, codes) => {
      const { code, urls } = await modulesOf(args, home, true);
      expect(codes, `exit code ${code}`).toContain(code);
      expect(outsideBundle(urls)).toEqual([]);
      const files = bundleFiles(urls);
      expect(files.map((f) => f.url).some((u) => u.endsWith("/dist/bundle/entry.js"))).toBe(true);
      expect(files.filter((f) => f.text.includes(SDK_MARK) || f.text.includes(SERVICE_MARK)).map((f) => f.url)).toEqual(
        [],
      );
    },
  );

  it("acp --version loads the entry and a few small files, not the core or the store (the bulk of every other command)", async () => {
    const { code, urls } = await modulesOf(["--version"], home, true);
    expect(code).toBe(0);
    const files = bundleFiles(urls);
    expect(files.map((f) => f.url).some((u) => u.endsWith("/dist/bundle/entry.js"))).toBe(true);
    // the core's barrel alone is over a megabyte bundled
    expect(files.reduce((sum, f) => sum + f.text.length, 0)).toBeLessThan(100_000);
    expect(urls.filter((u) => /better-sqlite3|\/node_modules\/yaml\//.test(u))).toEqual([]);
  });

  it("loads the SDK's code where a command needs it (acp proxy --help), still from the bundle", async () => {
    const { code, urls } = await modulesOf(["proxy", "--help"], home, true);
    expect(code).toBe(0);
    expect(outsideBundle(urls)).toEqual([]);
    expect(bundleFiles(urls).some((f) => f.text.includes(SDK_MARK))).toBe(true);
  });

  it("acp proxy loads the HTTP listener's code (the SDK's server transports, body decoding) only to listen over HTTP", async () => {
    const { code, urls } = await modulesOf(["proxy", "--help"], home, true);
    expect(code).toBe(0);
    const texts = bundleFiles(urls).map((f) => f.text);
    // esbuild names each module it bundles in a comment before its code
    const HTTP_ONLY = [
      "// node_modules/@modelcontextprotocol/sdk/dist/esm/server/streamableHttp.js",
      "// node_modules/iconv-lite/lib/index.js",
      "// node_modules/@modelcontextprotocol/sdk/dist/esm/client/sse.js",
    ];
    expect(HTTP_ONLY.filter((mark) => texts.some((t) => t.includes(mark)))).toEqual([]);
    // the marks are there to be found: the bundle holds them, in files `acp proxy --http` loads
    const dir = fileURLToPath(new URL("../dist/bundle/", import.meta.url));
    const all = readdirSync(dir).map((f) => readFileSync(join(dir, f), "utf8"));
    expect(HTTP_ONLY.filter((mark) => all.some((t) => t.includes(mark)))).toEqual(HTTP_ONLY);
  });

  it("imports no workspace package: every `@acp/…` module is inside it", () => {
    const dir = fileURLToPath(new URL("../dist/bundle/", import.meta.url));
    const js = readdirSync(dir).filter((f) => f.endsWith(".js"));
    expect(js.length).toBeGreaterThan(10);
    const importing = js.filter((f) => /(from\s*|import\s*\(\s*)["']@acp\//.test(readFileSync(join(dir, f), "utf8")));
    expect(importing).toEqual([]);
  });
});

describe("a command loaded alone is the command loaded with all the others", () => {
  it("has the same help, subcommands and options at every depth", async () => {
    const full = await createProgram(silentContext());
    const all = helps(full);
    let compared = 0;
    for (const top of full.commands) {
      const alone = await createProgram(silentContext(), [top.name()]);
      expect(alone.commands.map((c) => c.name())).toEqual([top.name()]);
      for (const [at, help] of helps(alone)) {
        if (at === "") continue;
        expect(help, at).toBe(all.get(at));
        compared++;
      }
    }
    expect(compared).toBe(all.size - 1);
  });
});

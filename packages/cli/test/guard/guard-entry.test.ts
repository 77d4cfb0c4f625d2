import { execFile } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempRoot } from "../home-fixture.js";

const ROOT = fileURLToPath(new URL("../../../../", import.meta.url));
const run = promisify(execFile);

/**
 * Imports `specifier` as a program of the checkout would (the built package, resolved through
 * `node_modules/@acp/cli` and its `exports`) in a fresh node with a resolve hook that writes down every
 * module loaded (running `then`, with the module as `m`, after the import), and returns them with the names the
 * entry exports.
 */
let runs = 0;

async function loadedBy(dir: string, specifier: string, then = ""): Promise<{ modules: string[]; names: string[] }> {
  const hooks = join(dir, "hooks.mjs");
  const loaded = join(dir, `loaded-${++runs}.txt`);
  writeFileSync(
    hooks,
    // appended to a file at once: the hooks run on their own thread, whose process.stderr a quick exit can
    // leave unsent, and a synchronous write to the stderr pipe fails with EAGAIN when a loaded machine's
    // parent drains it late
    'import { appendFileSync } from "node:fs";\n' +
      `export async function resolve(s, c, next) { const r = await next(s, c); appendFileSync(${JSON.stringify(loaded)}, \`LOADED \${r.url}\\n\`); return r; }\n`,
  );
  const register = join(dir, "register.mjs");
  writeFileSync(
    register,
    `import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`,
  );
  const program = `const m = await import(${JSON.stringify(specifier)}); ${then} console.log(JSON.stringify(Object.keys(m)));`;
  const { stdout } = await run(process.execPath, ["--import", register, "--input-type=module", "-e", program], {
    cwd: ROOT,
  });
  const lines = readFileSync(loaded, "utf8").split("\n");
  const modules = [...new Set(lines.filter((l) => l.startsWith("LOADED ")))].map((l) => l.slice(7));
  return { modules, names: JSON.parse(stdout) as string[] };
}

const heavy = (url: string): boolean =>
  /\/node_modules\/commander\//.test(url) ||
  /\/packages\/cli\/dist\/(main|commands\/)/.test(url) ||
  /\/packages\/(server|claim)\//.test(url);

/**
 * What the guard never needs: the MCP SDK and its zod and HTTP servers (the guard calls functions, not
 * MCP servers), the proxy's own servers, and the PostgreSQL driver (the guard's home is SQLite).
 */
const notTheGuards = (url: string): boolean =>
  /\/node_modules\/(@modelcontextprotocol\/sdk|zod|pg|@hono\/node-server|hono|express)\//.test(url) ||
  /\/packages\/proxy\/dist\/(index\.js|proxy-server\/|upstream\/upstream-pool|aggregate\/)/.test(url);

/** The Telegram library, which only a configured Telegram channel needs. */
const telegramLibrary = (url: string): boolean => /\/node_modules\/(grammy|@grammyjs\/[^/]+)\//.test(url);

describe("@acp/cli/guard: the guard's own entry point", () => {
  const root = tempRoot("guard-entry");
  afterAll(() => root.cleanup());
  beforeAll(async () => {
    // the entry is the built package, as a framework developer imports it: built now (incremental, quick
    // when up to date), so that a build older than the sources is not what is measured
    await run("npx", ["tsc", "-b", "packages/cli"], { cwd: ROOT });
  }, 120_000);

  it("exports openGuard and the refusal without loading commander, the commands, the server or claims", async () => {
    const { modules, names } = await loadedBy(root.dir, "@acp/cli/guard");
    expect(names).toEqual(expect.arrayContaining(["openGuard", "isGuardRefusal", "GuardRefusal", "GUARD_CHANNEL"]));
    expect(modules.some((url) => url.endsWith("/packages/cli/dist/guard/index.js"))).toBe(true);
    expect(modules.filter(heavy)).toEqual([]);
  });

  it("loads neither the MCP SDK, zod, the HTTP servers nor PostgreSQL (the packages' barrels would)", async () => {
    const { modules } = await loadedBy(root.dir, "@acp/cli/guard");
    expect(modules.some((url) => url.includes("/packages/proxy/dist/gate/"))).toBe(true);
    expect(modules.filter(notTheGuards)).toEqual([]);
  });

  it("loads no Telegram library (grammY is imported when a Telegram channel is created)", async () => {
    const { modules } = await loadedBy(root.dir, "@acp/cli/guard");
    expect(modules.some((url) => url.includes("/packages/proxy/dist/consent/"))).toBe(true);
    expect(modules.filter(telegramLibrary)).toEqual([]);
  });

  it("nor does the consent module, until a Telegram channel is created", async () => {
    const consent = await loadedBy(root.dir, "@acp/proxy/consent");
    expect(consent.names).toContain("createTelegramChannel");
    expect(consent.modules.filter(telegramLibrary)).toEqual([]);
    const created = await loadedBy(
      root.dir,
      "@acp/proxy/consent",
      "const c = m.createTelegramChannel({ token: '1:x', chatId: '1' }); await c.close();",
    );
    expect(created.modules.filter(telegramLibrary).length).toBeGreaterThan(0);
  });

  it("where @acp/proxy's barrel loads the MCP SDK (what the guard's entry spares)", async () => {
    const { modules } = await loadedBy(root.dir, "@acp/proxy");
    expect(modules.filter(notTheGuards).length).toBeGreaterThan(0);
    expect(modules.some((url) => url.includes("/node_modules/@modelcontextprotocol/sdk/"))).toBe(true);
  });

  it("where the package's main entry loads the whole command line (what the guard's entry spares)", async () => {
    const { modules, names } = await loadedBy(root.dir, "@acp/cli");
    expect(names).toEqual(expect.arrayContaining(["openGuard", "run"]));
    expect(modules.some((url) => url.includes("/node_modules/commander/"))).toBe(true);
    expect(modules.some((url) => url.includes("/packages/cli/dist/commands/"))).toBe(true);
  });
});

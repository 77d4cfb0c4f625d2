import { defineConfig } from "vitest/config";
import { fileURLToPath } from "node:url";

const src = (pkg: string): string => fileURLToPath(new URL(`./packages/${pkg}/src/index.ts`, import.meta.url));

export default defineConfig({
  resolve: {
    // Tests run against the sources, never a stale build.
    alias: {
      "@acp/core": src("core"),
      // before `@acp/cli`, whose alias would take `@acp/cli/guard` for a path under its index.ts
      "@acp/cli/guard": fileURLToPath(new URL("./packages/cli/src/guard/index.ts", import.meta.url)),
      "@acp/cli": src("cli"),
      "@acp/store": src("store"),
      // the subpaths the guard imports (to spare the MCP SDK the barrel loads), before `@acp/proxy`
      ...Object.fromEntries(
        ["gate", "consent", "config", "sandbox"].map((dir) => [
          `@acp/proxy/${dir}`,
          fileURLToPath(new URL(`./packages/proxy/src/${dir}/index.ts`, import.meta.url)),
        ]),
      ),
      "@acp/proxy": src("proxy"),
      "@acp/server": src("server"),
      "@acp/claim": src("claim"),
    },
  },
  test: {
    include: ["packages/*/test/**/*.test.ts", "test/**/*.test.ts"],
    pool: "forks",
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    testTimeout: 30_000,
    globalSetup: ["scripts/vitest-temp-root.ts", "packages/store/test/postgres/global-setup.ts"],
  },
});

import { configDefaults, defineConfig } from "vitest/config";
import { fileURLToPath } from "node:url";

const src = (pkg: string): string => fileURLToPath(new URL(`./packages/${pkg}/src/index.ts`, import.meta.url));

const TESTS = ["packages/*/test/**/*.test.ts", "test/**/*.test.ts"];
/** Test files that replace a module with vi.mock: they run each with a module cache of its own. */
const MOCKING = [
  "packages/server/test/file-audit-count.test.ts",
  "packages/store/test/audit/file-lock-break.test.ts",
  "packages/store/test/audit/file-lock-no-links.test.ts",
  "packages/store/test/audit/unanchored-race.test.ts",
  "packages/store/test/graph-review/read-bound.test.ts",
];

export default defineConfig({
  resolve: {
    // Tests run against the sources, never a stale build.
    alias: {
      // the subpaths `acp`'s entry imports (to spare every command the barrels), before their packages
      "@acp/core/suggest": fileURLToPath(new URL("./packages/core/src/suggest/index.ts", import.meta.url)),
      "@acp/store/state-db-error": fileURLToPath(
        new URL("./packages/store/src/sqlite/state-db-error.ts", import.meta.url),
      ),
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
      "@acp/proxy/http-rules": fileURLToPath(new URL("./packages/proxy/src/http-rules.ts", import.meta.url)),
      "@acp/proxy": src("proxy"),
      // the light subpath commands import (to spare them the service), before `@acp/server`
      "@acp/server/state": fileURLToPath(new URL("./packages/server/src/state.ts", import.meta.url)),
      "@acp/server": src("server"),
      "@acp/claim": src("claim"),
    },
  },
  test: {
    pool: "forks",
    // isolate here, at the root, is what the pool reads: with it unset each test file got a new process (and
    // imported everything again) whatever the projects said
    poolOptions: { forks: { maxForks: 2, minForks: 1, isolate: false } },
    testTimeout: 30_000,
    globalSetup: ["scripts/vitest-temp-root.ts", "packages/store/test/postgres/global-setup.ts"],
    projects: [
      {
        extends: true,
        // Test files share their worker's module cache: each file no longer imports the MCP SDK, zod and
        // the sources again (that import was half of a run's time on two cores). A file that changes a
        // module for itself (vi.mock) gets a fresh one instead, below.
        test: { name: "shared", include: TESTS, exclude: [...configDefaults.exclude, ...MOCKING], isolate: false },
      },
      {
        extends: true,
        // the project's own poolOptions, or the root's `isolate: false` would win over its `isolate: true`
        test: { name: "isolated", include: MOCKING, isolate: true, poolOptions: { forks: { isolate: true } } },
      },
    ],
  },
});

/**
 * Vitest global setup: starts ONE throwaway PostgreSQL (scripts/postgres.sh: Debian's package, installed
 * once with apt-get when missing) for the whole test run and hands its URL to the tests as
 * `inject("acpTestPostgres")` and `$ACP_TEST_POSTGRES_URL`; stops it at teardown. A URL already in
 * `$ACP_TEST_POSTGRES_URL` is used as is. When no selected test file needs PostgreSQL (a filtered run
 * elsewhere), nothing starts. A failure to install or start is handed on, not thrown: the PostgreSQL
 * tests then fail with it (see `postgresTestUrl`), the rest of the run goes on.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { TestProject } from "vitest/node";

/** What the tests receive: a URL, or why there is none. */
export interface TestPostgres {
  readonly url: string | null;
  readonly error: string | null;
}

declare module "vitest" {
  export interface ProvidedContext {
    acpTestPostgres: TestPostgres;
  }
}

const SCRIPT = fileURLToPath(new URL("../../../../scripts/postgres.sh", import.meta.url));
// Any package keeps its PostgreSQL tests under `test/postgres/`.
const NEEDS_POSTGRES = /\/packages\/[^/]+\/test\/postgres\//;
const run = promisify(execFile);

/** Whether the run includes a PostgreSQL test file (true when it cannot tell). */
async function needsPostgres(project: TestProject): Promise<boolean> {
  const filters = (project.vitest as unknown as { filenamePattern?: unknown }).filenamePattern;
  if (!Array.isArray(filters) || !filters.every((f) => typeof f === "string")) return true;
  const { testFiles } = await project.globTestFiles(filters);
  return testFiles.some((file) => file.replaceAll("\\", "/").match(NEEDS_POSTGRES) !== null);
}

function describeFailure(err: unknown): string {
  const stderr = (err as { stderr?: unknown }).stderr;
  const lines = typeof stderr === "string" ? stderr.trim().split("\n") : [];
  const last = lines.filter((l) => l.startsWith("postgres.sh:")).pop() ?? lines.pop();
  return last ?? (err instanceof Error ? err.message : String(err));
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const given = process.env["ACP_TEST_POSTGRES_URL"];
  if (given !== undefined && given !== "") {
    project.provide("acpTestPostgres", { url: given, error: null });
    return async () => {};
  }
  if (!(await needsPostgres(project))) {
    project.provide("acpTestPostgres", { url: null, error: "not started: no postgres test was selected" });
    return async () => {};
  }
  const dir = mkdtempSync(join(tmpdir(), "acp-pg-"));
  try {
    const { stdout } = await run("bash", [SCRIPT, "start", dir], { timeout: 600_000, maxBuffer: 16 << 20 });
    const url = stdout.trim().split("\n").pop() ?? "";
    if (!url.startsWith("postgres://")) throw new Error(`scripts/postgres.sh printed no URL (got \`${url}\`)`);
    process.env["ACP_TEST_POSTGRES_URL"] = url;
    project.provide("acpTestPostgres", { url, error: null });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    project.provide("acpTestPostgres", { url: null, error: `scripts/postgres.sh failed: ${describeFailure(err)}` });
    return async () => {};
  }
  return async () => {
    await run("bash", [SCRIPT, "stop", dir], { timeout: 60_000 }).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  };
}

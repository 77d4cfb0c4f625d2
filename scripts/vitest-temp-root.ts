/**
 * Vitest global setup: gives the whole test run one temporary root and removes it at the end.
 *
 * Tests make their homes, sockets and fixtures with `mkdtemp(join(tmpdir(), …))`. Setting `TMPDIR`
 * here, before any test worker starts, puts all of them (and those of the processes the tests spawn,
 * which inherit the environment) under `/tmp/acp-test-run-XXXXXX`, so a run never leaves thousands of
 * directories behind in the machine's `/tmp` — even when a test fails before its own clean-up, or a
 * spawned `acp` process outlives it. It must be listed first so its teardown runs last.
 */
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export default function setup(): () => void {
  const previous = process.env["TMPDIR"];
  const root = mkdtempSync(join(tmpdir(), "acp-test-run-"));
  // Others may pass through but not list it, like a home directory: run as root, the test PostgreSQL
  // runs as the `postgres` user and must reach its data directory (itself 0700) below this root.
  chmodSync(root, 0o711);
  process.env["TMPDIR"] = root;
  return () => {
    if (previous === undefined) delete process.env["TMPDIR"];
    else process.env["TMPDIR"] = previous;
    rmSync(root, { recursive: true, force: true, maxRetries: 3 });
  };
}

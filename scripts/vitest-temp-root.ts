/**
 * Vitest global setup: gives the whole test run one temporary root and removes it at the end.
 *
 * Tests make their homes, sockets and fixtures with `mkdtemp(join(tmpdir(), …))`. Setting `TMPDIR`
 * here, before any test worker starts, puts all of them (and those of the processes the tests spawn,
 * which inherit the environment) under `/tmp/acp-test-run-XXXXXX`, so a run never leaves thousands of
 * directories behind in the machine's `/tmp` — even when a test fails before its own clean-up, or a
 * spawned `acp` process outlives it. It must be listed first so its teardown runs last.
 *
 * Every project of the run (vitest.config.ts) runs its global setup: they share the one root, which the
 * last teardown removes. A root per project would nest (the second made under the first's TMPDIR), and a
 * project that finished first would delete the directory the others' tests and browsers were using.
 */
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The run's root, shared by every project's setup (on globalThis: each may load this module anew). */
interface SharedRoot {
  root: string;
  previous: string | undefined;
  users: number;
}
const KEY = Symbol.for("acp.vitestTempRoot");
const shared = globalThis as unknown as Record<symbol, SharedRoot | undefined>;

export default function setup(): () => void {
  let state = shared[KEY];
  if (state === undefined) {
    const previous = process.env["TMPDIR"];
    const root = mkdtempSync(join(tmpdir(), "acp-test-run-"));
    // Others may pass through but not list it, like a home directory: run as root, the test PostgreSQL
    // runs as the `postgres` user and must reach its data directory (itself 0700) below this root.
    chmodSync(root, 0o711);
    process.env["TMPDIR"] = root;
    state = { root, previous, users: 0 };
    shared[KEY] = state;
  }
  state.users++;
  const mine = state;
  return () => {
    if (--mine.users > 0) return;
    shared[KEY] = undefined;
    if (mine.previous === undefined) delete process.env["TMPDIR"];
    else process.env["TMPDIR"] = mine.previous;
    rmSync(mine.root, { recursive: true, force: true, maxRetries: 3 });
  };
}

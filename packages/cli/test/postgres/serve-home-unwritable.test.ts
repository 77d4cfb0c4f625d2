/**
 * `acp serve` on PostgreSQL with a home it cannot write (not made by `acp init`, or mounted read-only, as a
 * container's secret can be): on PostgreSQL nothing before it listens writes the home, so it got as far as
 * writing `serve.json` and ended with `acp: internal error: ENOENT: … .serve.json….tmp`. It now says which
 * file in which home, what the home is for, and how to give it one (exit 1).
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "../../../store/test/postgres/test-database.js";
import { freshHome, startServe } from "../serve-fixture.js";

const db = useTestDatabase();

describe("acp serve on PostgreSQL with a home it cannot write", () => {
  it("stops with which file, which home and the fix, exit 1, not an internal error", async () => {
    const elsewhere = freshHome(); // only for its policy.yml
    const home = join(elsewhere, "no-such-home");
    const serve = startServe(home, ["--storage-url", db.url, "--port", "0", "--policy", join(elsewhere, "policy.yml")]);
    const failed = (await serve.done.then(
      () => null,
      (e: unknown) => e,
    )) as { message: string; exitCode?: number } | null;
    expect(failed?.exitCode).toBe(1);
    expect(failed?.message).toBe(
      `cannot write serve.json in the home \`${home}\` (ENOENT): acp serve keeps it there for acp console-link, ` +
        "and on PostgreSQL its audit anchor on the chain too; give it a writable home (run `acp init` there, or " +
        "copy a node's home)",
    );
  });
});

import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { homePaths } from "@acp/store";
import { runCli } from "./run.js";
import { envFor, tempRoot } from "./home-fixture.js";

// the passphrase `acp init` takes guards the private key: a blank one protects nothing and is refused; a short
// one is kept (the person chose it) with a warning on stderr that names its length, never the passphrase

const root = tempRoot("init-passphrase");
afterAll(root.cleanup);

describe("acp init's passphrase", () => {
  it("refuses a whitespace-only passphrase (usage, exit 2) and writes no home", async () => {
    const home = join(root.dir, "blank");
    const r = await runCli(["init"], { env: envFor(home, "   ") });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("acp: the passphrase must not be blank (only spaces): choose one of 12 characters or more\n");
    expect(existsSync(homePaths(home).privateKey)).toBe(false);
  });

  it("keeps a short passphrase with a warning naming its length, not its text", async () => {
    const home = join(root.dir, "short");
    const r = await runCli(["init"], { env: envFor(home, "a") });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(
      "warning: the passphrase is 1 character long: a short one is guessed offline from a copied keys/private.key; 12 characters or more is safer (re-run `acp init --force`)\n",
    );
    expect(existsSync(homePaths(home).privateKey)).toBe(true);
  });

  it("says nothing of a passphrase of 12 characters or more", async () => {
    const home = join(root.dir, "long");
    const r = await runCli(["init"], { env: envFor(home, "correct horse") });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
  });
});

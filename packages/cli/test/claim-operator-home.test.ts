import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CLAIM_MIGRATIONS } from "@acp/claim";
import { openStateDb } from "@acp/store";
import { runCli } from "./run.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function emptyHome(): string {
  const dir = mkdtempSync(join(tmpdir(), "acp-claim-operator-"));
  dirs.push(dir);
  return dir;
}

/** Every path under `dir`, relative to it. */
function tree(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" }).sort();
}

describe("acp claim operator commands and the ACP home", () => {
  it("reputation against an empty HOME creates no home, database or key, and says there is no ACP home", async () => {
    const home = emptyHome();
    const out = await runCli(["claim", "reputation", "203.0.113.7"], { env: { HOME: home } });
    expect(out.code).toBe(1);
    expect(out.stderr).toBe(
      `acp: no ACP home at \`${join(home, ".acp")}\`: run it with the provider's ACP_HOME, or give --db or --storage-url\n`,
    );
    expect(tree(home)).toEqual([]);
  });

  it("reputation --reset and takedown against an empty HOME create nothing either", async () => {
    const home = emptyHome();
    const reset = await runCli(["claim", "reputation", "203.0.113.0/24", "--reset"], { env: { HOME: home } });
    expect(reset.code).toBe(1);
    const down = await runCli(["claim", "takedown", "a".repeat(26)], { env: { HOME: home } });
    expect(down.code).toBe(1);
    expect(down.stderr).toContain("no ACP home at");
    expect(tree(home)).toEqual([]);
  });

  it("a home without the provider's state.db, or a --db that does not exist, is named and not created", async () => {
    const home = emptyHome();
    const acpHome = join(home, ".acp");
    mkdirSync(acpHome);
    const env = { HOME: home, ACP_HOME: acpHome };
    const out = await runCli(["claim", "reputation", "203.0.113.7"], { env });
    expect(out.code).toBe(1);
    expect(out.stderr).toContain(`no claim provider state at \`${join(acpHome, "state.db")}\``);
    const missing = join(home, "nope.db");
    const db = await runCli(["claim", "reputation", "203.0.113.7", "--db", missing], { env });
    expect(db.code).toBe(1);
    expect(db.stderr).toBe(`acp: --db: \`${missing}\` does not exist\n`);
    expect(tree(home)).toEqual([".acp"]);
  });

  it("reputation reads a provider's state.db without making a provider key", async () => {
    const home = emptyHome();
    const acpHome = join(home, ".acp");
    mkdirSync(acpHome);
    openStateDb(join(acpHome, "state.db"), { migrations: CLAIM_MIGRATIONS }).close();
    const out = await runCli(["claim", "reputation", "203.0.113.7", "--json"], {
      env: { HOME: home, ACP_HOME: acpHome },
    });
    expect(out.stderr).toBe("");
    expect(out.code).toBe(0);
    expect(JSON.parse(out.stdout)).toEqual({
      sources: [{ key: "range:203.0.113.0/24", score: 0, extra_bits: 0, refused_for_seconds: 0 }],
    });
    expect(existsSync(join(acpHome, "claim"))).toBe(false);
  });

  it("takedown, which needs the provider key to find a handle, refuses to make one up", async () => {
    const home = emptyHome();
    const acpHome = join(home, ".acp");
    mkdirSync(acpHome);
    openStateDb(join(acpHome, "state.db")).close();
    const out = await runCli(["claim", "takedown", "a".repeat(26)], { env: { HOME: home, ACP_HOME: acpHome } });
    expect(out.code).toBe(1);
    expect(out.stderr).toBe(
      `acp: no provider key at \`${join(acpHome, "claim", "provider.key")}\`: run it with the provider's ACP_HOME (the one \`acp claim serve\` uses)\n`,
    );
    expect(existsSync(join(acpHome, "claim"))).toBe(false);
  });
});

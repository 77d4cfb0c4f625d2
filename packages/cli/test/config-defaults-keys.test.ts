import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CliError } from "../src/exit-codes.js";
import { readConfigFile } from "../src/wiring/config-file.js";
import { configInUse } from "../src/wiring/config-in-use.js";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";
import { runCli } from "./run.js";
import { freshHome, serveFailure } from "./serve-fixture.js";

const root = tempRoot("config-defaults-keys");
afterAll(root.cleanup);
let n = 0;

/** A config file whose `defaults:` has a misspelt key (line 3) and an unknown one (line 4). */
function typoConfig(): string {
  const path = join(root.dir, `defaults-${++n}.yml`);
  writeFileSync(path, 'version: "1"\ndefaults:\n  timout_seconds: 30\n  colour: red\n  policy: p.yml\n');
  return path;
}

function failure(run: () => unknown): CliError {
  try {
    run();
  } catch (err) {
    if (err instanceof CliError) return err;
    throw err;
  }
  throw new Error("no error");
}

describe("config.yml defaults: an unknown key is refused like an unknown top-level key", () => {
  it("names each at FILE:LINE:COL with the closest key, or the keys it takes (exit 4)", () => {
    const path = typoConfig();
    const err = failure(() => configInUse(readConfigFile(path, true)));
    expect(err.exitCode).toBe(4);
    expect(err.message.split("\n")).toEqual([
      `${path}:3:19: unknown key \`defaults.timout_seconds\` (did you mean \`defaults.timeout_seconds\`?)`,
      `${path}:4:11: unknown key \`defaults.colour\` (expected timeout_seconds, policy)`,
    ]);
  });

  it("takes timeout_seconds and policy, an empty section, and refuses a section that is not a mapping", () => {
    const ok = join(root.dir, "defaults-ok.yml");
    writeFileSync(ok, 'version: "1"\ndefaults:\n  timeout_seconds: 30\n  policy: p.yml\n');
    expect(configInUse(readConfigFile(ok, true)).proxy).toBeDefined();
    const empty = join(root.dir, "defaults-empty.yml");
    writeFileSync(empty, 'version: "1"\ndefaults:\n');
    expect(() => configInUse(readConfigFile(empty, true))).not.toThrow();
    const scalar = join(root.dir, "defaults-scalar.yml");
    writeFileSync(scalar, 'version: "1"\ndefaults: 30\n');
    const err = failure(() => configInUse(readConfigFile(scalar, true)));
    expect(err.exitCode).toBe(4);
    expect(err.message).toBe(`${scalar}:2:11: \`defaults\` must be a mapping (timeout_seconds, policy)`);
  });

  it("acp proxy --config FILE stops before it starts (exit 4)", async () => {
    const { home } = fixtureHome(root.dir);
    const path = typoConfig();
    const out = await runCli(["proxy", "--config", path, "--upstream", "true"], { env: envFor(home) });
    expect(out.code).toBe(4);
    expect(out.stderr).toContain(`${path}:3:19: unknown key \`defaults.timout_seconds\` (did you mean`);
  });

  it("acp doctor fails its config check, one line per key", async () => {
    const { home } = fixtureHome(root.dir);
    const path = typoConfig();
    const out = await runCli(["doctor", "--json", "--config", path], { env: envFor(home) });
    expect(out.code).toBe(1);
    const checks = (JSON.parse(out.stdout) as { checks: { status: string; name: string; detail: string }[] }).checks;
    expect(checks.filter((c) => c.name === "config")).toEqual([
      {
        status: "fail",
        name: "config",
        detail: `${path}:3:19: unknown key \`defaults.timout_seconds\` (did you mean \`defaults.timeout_seconds\`?)`,
      },
      {
        status: "fail",
        name: "config",
        detail: `${path}:4:11: unknown key \`defaults.colour\` (expected timeout_seconds, policy)`,
      },
    ]);
  });

  it("acp serve stops (exit 4) before it listens", async () => {
    const home = freshHome();
    writeFileSync(join(home, "config.yml"), 'version: "1"\ndefaults:\n  timout_seconds: 30\n');
    const err = await serveFailure(home, ["--port", "0"]);
    expect(err?.exitCode).toBe(4);
    expect(err?.message).toContain(
      `${join(home, "config.yml")}:3:19: unknown key \`defaults.timout_seconds\` (did you mean \`defaults.timeout_seconds\`?)`,
    );
    expect(existsSync(join(home, "serve.json"))).toBe(false);
  });
});

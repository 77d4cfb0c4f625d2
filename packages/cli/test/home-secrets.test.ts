import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { afterAll, describe, expect, it } from "vitest";
import { loadMasterSeed } from "@acp/store";
import { homeSecretValues } from "../src/wiring/home-secrets.js";
import { envFor, fixtureHome, PASSPHRASE, tempRoot } from "./home-fixture.js";
import { runCli } from "./run.js";

// What `acp run` hides from the agent's environment must be the plain values: a shell exports the token,
// never its sealed `encrypted:` text.
describe("homeSecretValues: the plain secrets of a home", () => {
  const root = tempRoot("home-secrets");
  afterAll(() => root.cleanup());
  const seedOf = (home: string, passphrase: string | undefined) => () => {
    const seed = loadMasterSeed(home, passphrase);
    return seed.ok ? Promise.resolve(seed.value) : Promise.reject(new Error(seed.issues[0]?.message));
  };

  it("opens every vault entry and every sealed config value with the home's key", async () => {
    const { home } = fixtureHome(root.dir);
    const env = envFor(home);
    expect((await runCli(["vault", "set", "GITHUB_TOKEN"], { env, stdin: "ghp_vault_value_123456\n" })).code).toBe(0);
    const sealed = await runCli(["config", "set-secret", "telegram.bot_token"], {
      env,
      stdin: "123456:telegram-token-value\n",
    });
    expect(sealed.code, sealed.stderr).toBe(0);
    const config = parseYaml(readFileSync(join(home, "config.yml"), "utf8")) as unknown;
    expect(JSON.stringify(config)).not.toContain("telegram-token-value");
    const got = await homeSecretValues(home, config, seedOf(home, PASSPHRASE));
    expect(got.problem).toBeUndefined();
    expect([...got.values].sort()).toEqual(["123456:telegram-token-value", "ghp_vault_value_123456"]);
  });

  it("says why when the key does not open, and holds nothing; a home without a key holds nothing either", async () => {
    const { home } = fixtureHome(root.dir);
    expect(await homeSecretValues(home, {}, seedOf(home, "wrong-passphrase"))).toEqual({
      values: [],
      problem: expect.stringMatching(/^the home's key did not open: /) as unknown,
    });
    expect((await homeSecretValues(home, {}, seedOf(home, undefined))).problem).toMatch(/ACP_PASSPHRASE|passphrase/);
    const none = join(root.dir, "no-home");
    expect(await homeSecretValues(none, {}, seedOf(none, PASSPHRASE))).toEqual({ values: [] });
  });
});

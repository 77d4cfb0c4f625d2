import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "./run.js";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";

/**
 * A consent channel's secret written in clear in config.yml (`webhook.secret: …` instead of the `encrypted:…`
 * `acp config set-secret` writes) stops `acp proxy` at start, before any upstream: the secret is opened only when
 * a person is first asked, so it used to pass the start and fail on the first request, which then waited on
 * `acp pending` with nobody told.
 */

const root = tempRoot("proxy-plain-channel-secret");
afterAll(root.cleanup);

/** An upstream that leaves a file behind when it is started: the proof that the proxy got that far. */
function markingUpstream(marker: string): string {
  const script = join(root.dir, `upstream-${Math.random().toString(36).slice(2)}.mjs`);
  writeFileSync(
    script,
    `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(marker)}, "started");\n`,
  );
  return `${process.execPath} ${script}`;
}

describe("acp proxy: the chosen channel's secret must be sealed", () => {
  it.each([
    [
      "webhook.secret",
      'channel: webhook\nwebhook:\n  url: "http://127.0.0.1:9/consent"\n  secret: w3bh00k-s3cr3t-0123\n',
      "5:11",
    ],
    ["telegram.bot_token", "channel: telegram\ntelegram:\n  bot_token: '123:b0t-t0k3n'\n  chat_id: 42\n", "4:14"],
  ])("refuses a plain %s at start (exit 4, config_secret_plain), before any upstream starts", async (key, yaml, at) => {
    const { home } = fixtureHome(root.dir);
    writeFileSync(join(home, "config.yml"), `version: "1"\n${yaml}`);
    const marker = join(root.dir, `started-${key}`);
    const out = await runCli(["proxy", "--upstream", markingUpstream(marker), "--name", "marked"], {
      env: envFor(home),
    });
    expect(out.code).toBe(4);
    expect(out.stderr).toContain(
      `${join(home, "config.yml")}:${at}: \`${key}\` in config.yml is not sealed (run \`acp config set-secret ${key}\`)`,
    );
    // never shown, and nothing started
    expect(out.stderr).not.toMatch(/w3bh00k|b0t-t0k3n/);
    expect(existsSync(marker)).toBe(false);
  });

  it("names the file of --config FILE and says how to carry the sealed value there", async () => {
    const { home } = fixtureHome(root.dir);
    const file = join(root.dir, "elsewhere.yml");
    writeFileSync(
      file,
      'version: "1"\nchannel: webhook\nwebhook:\n  url: "http://127.0.0.1:9/c"\n  secret: plain-0123456789abcdef\n',
    );
    const marker = join(root.dir, "started-elsewhere");
    const out = await runCli(["proxy", "--config", file, "--upstream", markingUpstream(marker)], { env: envFor(home) });
    expect(out.code).toBe(4);
    expect(out.stderr).toContain(
      `${file}:5:11: \`webhook.secret\` in elsewhere.yml is not sealed (run \`acp config set-secret webhook.secret\`, then copy its \`encrypted:\` value from config.yml into elsewhere.yml)`,
    );
    expect(existsSync(marker)).toBe(false);
  });

  it("a sealed secret, or a plain one in the section of a channel not chosen, is not refused here", async () => {
    const { home } = fixtureHome(root.dir);
    const env = envFor(home);
    writeFileSync(
      join(home, "config.yml"),
      'version: "1"\nchannel: webhook\nwebhook:\n  url: "http://127.0.0.1:9/consent"\n  secret: ""\ntelegram:\n  bot_token: not-chosen\n',
    );
    const sealed = await runCli(["config", "set-secret", "webhook.secret"], {
      env,
      stdin: "sealed-webhook-secret-0123456789\n",
    });
    expect(sealed.code).toBe(0);
    const marker = join(root.dir, "started-sealed");
    const out = await runCli(["proxy", "--upstream", markingUpstream(marker)], { env });
    // the check passed: the upstream started (and, speaking no MCP, failed)
    expect(out.stderr).not.toContain("is not sealed");
    expect(out.stderr).toContain("every upstream server failed to start");
    expect(out.code).toBe(1);
    expect(existsSync(marker)).toBe(true);
  });
});

/**
 * `acp doctor` reports a bad value of each key added to config.yml this release, in the words the command that
 * reads it would stop with: `sandbox.max_cpu` and `sandbox.max_memory` (acp run), `proxy.insecure_plain_http`
 * (acp proxy), `serve.insecure_plain_http` and `storage.connect_wait` (acp serve).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";
import { runCli } from "./run.js";

const root = tempRoot("doctor-config-values");
afterAll(root.cleanup);

type Check = { status: string; name: string; detail: string };

describe("acp doctor: a bad value of a new config key fails the check of the command that reads it", () => {
  it("names each key, at FILE:LINE:COL where the proxy's checks say so, and exits 1", async () => {
    const { home } = fixtureHome(root.dir);
    const path = join(home, "config.yml");
    writeFileSync(
      path,
      [
        'version: "1"',
        "proxy:",
        '  insecure_plain_http: "yes"',
        "sandbox:",
        "  max_cpu: 0",
        "  max_memory: lots",
        "serve:",
        "  insecure_plain_http: 1",
        "storage:",
        "  connect_wait: -5",
        "",
      ].join("\n"),
    );
    const out = await runCli(["doctor", "--json"], { env: envFor(home) });
    expect(out.code).toBe(1);
    const failed = (JSON.parse(out.stdout) as { checks: Check[] }).checks
      .filter((c) => c.status === "fail")
      .map((c) => [c.name, c.detail]);
    expect(failed).toContainEqual(["proxy", `${path}:3:24: \`proxy.insecure_plain_http\` must be true or false`]);
    expect(failed).toContainEqual([
      "sandbox",
      `${path}:6:15: \`sandbox.max_memory\` must be a size of at least 32 MiB (bytes, or a whole number with K, M, G or T, e.g. 2G), not "lots"`,
    ]);
    expect(failed).toContainEqual([
      "sandbox",
      `${path}:5:12: \`sandbox.max_cpu\` must be a number of CPUs from 0.01 to 4096 (e.g. 1.5), not 0`,
    ]);
    expect(failed).toContainEqual(["serve", "config.yml: serve.insecure_plain_http: `1` is not true or false"]);
    expect(failed).toContainEqual([
      "serve",
      "config.yml: storage.connect_wait: `-5` is not a number of seconds from 0 to 3600 (0: do not wait)",
    ]);
  });
});

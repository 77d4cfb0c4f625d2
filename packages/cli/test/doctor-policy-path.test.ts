import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "./run.js";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";

const root = tempRoot("doctor-policy-path");
afterAll(root.cleanup);

const DENIES =
  'version: "1"\ndefault_action: deny\nrules:\n  - id: echo-denied\n    match: { tool: echo }\n    action: deny\n';

async function policyCheck(
  home: string,
  env: Record<string, string> = {},
): Promise<{ status: string; detail: string }> {
  const r = await runCli(["doctor", "--json"], { env: { ...envFor(home), ...env } });
  const checks = (JSON.parse(r.stdout) as { checks: { status: string; name: string; detail: string }[] }).checks;
  const found = checks.find((c) => c.name === "policy");
  if (found === undefined) throw new Error("no policy check");
  return found;
}

describe("acp doctor: the policy in use (defaults.policy)", () => {
  it("says the home's policy.yml is in use when config.yml names none", async () => {
    const { home } = fixtureHome(root.dir);
    writeFileSync(join(home, "config.yml"), 'version: "1"\n');
    const check = await policyCheck(home);
    expect(check.status).toBe("ok");
    expect(check.detail).toContain(`${join(home, "policy.yml")} (the home's policy.yml)`);
  });

  it("checks the file defaults.policy names (relative: from the home) and says so", async () => {
    const { home } = fixtureHome(root.dir);
    writeFileSync(join(home, "strict.yml"), DENIES, { mode: 0o600 });
    writeFileSync(join(home, "config.yml"), 'version: "1"\ndefaults:\n  policy: strict.yml\n');
    const check = await policyCheck(home);
    expect(check).toEqual({
      status: "ok",
      name: "policy",
      detail: `1 rules, default deny: ${join(home, "strict.yml")} (defaults.policy in config.yml)`,
    });
  });

  it("fails when defaults.policy names a missing file, though the home's policy.yml is there", async () => {
    const { home } = fixtureHome(root.dir);
    writeFileSync(join(home, "config.yml"), 'version: "1"\ndefaults:\n  policy: missing.yml\n');
    const check = await policyCheck(home);
    expect(check.status).toBe("fail");
    expect(check.detail).toContain(`cannot read policy \`${join(home, "missing.yml")}\``);
  });

  it("expands ~ in defaults.policy with the HOME acp was run with", async () => {
    const { home } = fixtureHome(root.dir);
    writeFileSync(join(home, "strict.yml"), DENIES, { mode: 0o600 });
    writeFileSync(join(home, "config.yml"), 'version: "1"\ndefaults:\n  policy: "~/strict.yml"\n');
    const check = await policyCheck(home, { HOME: home });
    expect(check.status).toBe("ok");
    expect(check.detail).toContain(`${join(home, "strict.yml")} (defaults.policy in config.yml)`);
  });
});

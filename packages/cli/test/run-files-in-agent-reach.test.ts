/**
 * `acp run` refuses a policy or config file the agent could change (in its working directory, a --writable
 * path, or behind a symbolic link there): the policy is reloaded while the agent runs, so the agent would
 * decide its own calls; the config is read by the next run. ACP's home, covered inside the sandbox, is fine.
 */
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scratchDir } from "../../proxy/test/sandbox/net-fixture.js";
import { runCli } from "./run.js";

let work: { path: string; remove(): void };
let project: string;
let outside: string;
let env: Record<string, string>;

beforeAll(() => {
  work = scratchDir("acp-run-reach-");
  project = join(work.path, "project");
  outside = join(work.path, "outside");
  mkdirSync(project);
  mkdirSync(outside);
  writeFileSync(join(project, "policy.yml"), "version: 1\n");
  writeFileSync(join(outside, "policy.yml"), "version: 1\n");
  symlinkSync(join(outside, "policy.yml"), join(project, "linked-policy.yml"));
  env = { PATH: process.env["PATH"] ?? "", HOME: work.path, ACP_HOME: join(work.path, "home") };
});
afterAll(() => work?.remove());

describe("acp run and the files ACP decides by", () => {
  it("refuses a --policy in the agent's working directory (exit 2), saying why and what to do", async () => {
    const out = await runCli(["run", "--isolation", "none", "--policy", "policy.yml", "--", "/bin/true"], {
      env,
      cwd: project,
    });
    expect(out.code).toBe(2);
    expect(out.stderr).toContain(
      `run: the policy file \`${join(project, "policy.yml")}\` lies in \`${project}\`, which the agent may change (its working directory or a --writable path): it could rewrite the policy that decides its own calls (a changed policy is reloaded while it runs) (keep it outside, e.g. in ACP's home \`${join(work.path, "home")}\`, or run the agent from another directory)`,
    );
  });

  it("refuses a --policy reached through a symbolic link in the working directory", async () => {
    const out = await runCli(["run", "--isolation", "none", "--policy", "linked-policy.yml", "--", "/bin/true"], {
      env,
      cwd: project,
    });
    expect(out.code).toBe(2);
    expect(out.stderr).toContain(`the policy file \`${join(project, "linked-policy.yml")}\` lies in \`${project}\``);
  });

  it("refuses a --config in a --writable path", async () => {
    writeFileSync(join(outside, "acp.yml"), "{}\n");
    const out = await runCli(
      ["run", "--isolation", "none", "--writable", outside, "--config", join(outside, "acp.yml"), "--", "/bin/true"],
      { env, cwd: project },
    );
    expect(out.code).toBe(2);
    expect(out.stderr).toContain(`run: the config file \`${join(outside, "acp.yml")}\` lies in \`${outside}\``);
    expect(out.stderr).toContain("the config (allowed egress, consent channels, credentials) the next acp run reads");
  });
});

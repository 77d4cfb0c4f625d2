/**
 * `acp run` refuses a policy, config or intent file the agent could change (in its working directory, a
 * --writable path, or behind a symbolic link there): the policy is reloaded while the agent runs, so the agent
 * would decide its own calls; the config and the intent are read by the next run. ACP's home, covered inside
 * the sandbox, is fine.
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
  writeFileSync(join(project, "intent.yml"), 'goal: tidy the inbox\nallowed_actions: ["mail.*"]\n');
  writeFileSync(join(outside, "intent.yml"), 'goal: tidy the inbox\nallowed_actions: ["mail.*"]\n');
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

  it("refuses an --intent in the agent's working directory (exit 2): the next run would read what it wrote", async () => {
    const out = await runCli(["run", "--isolation", "none", "--intent", "intent.yml", "--", "/bin/true"], {
      env,
      cwd: project,
    });
    expect(out.code).toBe(2);
    expect(out.stderr).toContain(
      `run: the intent file \`${join(project, "intent.yml")}\` lies in \`${project}\`, which the agent may change (its working directory or a --writable path): it could rewrite the intent its sessions run under (read once here, but the next acp run --intent reads what it wrote) (keep it outside, e.g. in ACP's home \`${join(work.path, "home")}\`, or run the agent from another directory)`,
    );
  });

  it("refuses an --intent in a --writable path, and takes the same file from where the agent cannot write", async () => {
    const refused = await runCli(
      ["run", "--isolation", "none", "--writable", outside, "--intent", join(outside, "intent.yml"), "--", "/bin/true"],
      { env, cwd: project },
    );
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`run: the intent file \`${join(outside, "intent.yml")}\` lies in \`${outside}\``);
    const taken = await runCli(
      ["run", "--isolation", "none", "--intent", join(outside, "intent.yml"), "--", "/bin/true"],
      { env, cwd: project },
    );
    expect(taken.stderr).not.toContain("the intent file");
    expect(taken.code).toBe(0);
  });
});

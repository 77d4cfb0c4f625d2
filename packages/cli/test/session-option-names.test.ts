import { rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "./run.js";
import { ID_A, seedPending, statusOf, tempHome } from "./pending-fixtures.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const ATTACKS = `${ROOT}examples/attacks/`;
const VERIFY = `${ROOT}examples/verify/good/`;
const homes: string[] = [];

function home(): string {
  const dir = tempHome();
  homes.push(dir);
  return dir;
}

afterAll(() => {
  for (const dir of homes) rmSync(dir, { recursive: true, force: true });
});

const replayArgs = (flag: string): string[] => [
  "replay",
  "--policy",
  `${ATTACKS}policy.yml`,
  flag,
  `${ATTACKS}session.yml`,
  `${ATTACKS}ipi-calendar-exfil.jsonl`,
  "--json",
];
const verifyArgs = (flag: string): string[] => [
  "policy",
  "verify",
  "--policy",
  `${VERIFY}policy.yml`,
  "--intent",
  `${VERIFY}intent.json`,
  flag,
  `${VERIFY}session.yml`,
  "--depth",
  "2",
  "--json",
];

describe("--session meant three things; each now has a name that says which", () => {
  it("--help names --for-session (approve), --session-id (intent set), --session-settings (replay, policy verify)", async () => {
    const help = async (argv: string[]): Promise<string> => (await runCli([...argv, "--help"])).stdout;
    expect(await help(["approve"])).toContain("--for-session");
    expect(await help(["intent", "set"])).toContain("-s, --session-id <id>");
    expect(await help(["replay"])).toContain("--session-settings <file>");
    expect(await help(["policy", "verify"])).toContain("--session-settings <file>");
    for (const argv of [["approve"], ["intent", "set"], ["replay"], ["policy", "verify"]])
      expect(await help(argv)).not.toMatch(/--session[ ,]/);
  });

  it("acp approve --for-session approves for the session, silently", async () => {
    const dir = home();
    seedPending(dir, { id: ID_A });
    const out = await runCli(["approve", ID_A, "--for-session"], { env: { ACP_HOME: dir } });
    expect(out).toMatchObject({ code: 0, stderr: "" });
    expect(statusOf(dir, ID_A)).toMatchObject({ status: "approved", answer: { scope: "session" } });
  });

  it("acp approve --session still works, with a deprecation warning naming --for-session", async () => {
    const dir = home();
    seedPending(dir, { id: ID_A });
    const out = await runCli(["approve", ID_A, "--session"], { env: { ACP_HOME: dir } });
    expect(out.code).toBe(0);
    expect(out.stdout).toContain("scope: session");
    expect(out.stderr).toBe(
      "acp: warning: --session is deprecated here and will be removed: say --for-session (the same meaning)\n",
    );
    expect(statusOf(dir, ID_A)).toMatchObject({ status: "approved", answer: { scope: "session" } });
  });

  it("the old and the new name together are a usage error (exit 2) and nothing is recorded", async () => {
    const dir = home();
    seedPending(dir, { id: ID_A });
    const out = await runCli(["approve", ID_A, "--session", "--for-session"], { env: { ACP_HOME: dir } });
    expect(out.code).toBe(2);
    expect(out.stderr).toContain("give --for-session once (--session is its old name, deprecated)");
    expect(statusOf(dir, ID_A)).toMatchObject({ status: "pending" });
  });

  it("acp intent set: --session-id names the session; --session still does, with a warning", async () => {
    const env = { ACP_HOME: home() };
    const current = await runCli(["intent", "set", "--session-id", "stdio_nope", `${VERIFY}intent.json`], { env });
    expect(current.code).toBe(4);
    expect(current.stderr).toBe("acp: no session `stdio_nope` (see `acp intent set --list`)\n");
    const old = await runCli(["intent", "set", "--session", "stdio_nope", `${VERIFY}intent.json`], { env });
    expect(old.code).toBe(4);
    expect(old.stderr).toBe(
      "acp: warning: --session is deprecated here and will be removed: say --session-id (the same meaning)\n" +
        "acp: no session `stdio_nope` (see `acp intent set --list`)\n",
    );
    const missing = await runCli(["intent", "set", `${VERIFY}intent.json`], { env });
    expect(missing).toMatchObject({ code: 2, stderr: "acp: name the session with --session-id ID (see --list)\n" });
  });

  it("acp replay: --session-settings and the deprecated --session read the same file to the same routes", async () => {
    const current = await runCli(replayArgs("--session-settings"));
    const old = await runCli(replayArgs("--session"));
    expect(current.code).toBe(0);
    expect(current.stderr).toBe("");
    expect(old.code).toBe(0);
    expect(old.stdout).toBe(current.stdout);
    expect(old.stderr).toBe(
      "acp: warning: --session is deprecated here and will be removed: say --session-settings (the same meaning)\n",
    );
  });

  it("acp policy verify: the same, and the replay command it suggests says --session-settings", async () => {
    const current = await runCli(verifyArgs("--session-settings"));
    const old = await runCli(verifyArgs("--session"));
    expect(current.code).toBe(0);
    expect(old.code).toBe(0);
    expect(old.stdout).toBe(current.stdout);
    expect(old.stderr).toContain("say --session-settings");
    const both = await runCli([...verifyArgs("--session"), "--session-settings", `${VERIFY}session.yml`]);
    expect(both.code).toBe(2);
  });
});

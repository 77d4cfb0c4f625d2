import { afterAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runCli } from "./run.js";

// A path under a regular file stands for one that cannot be written: root ignores permissions, a file
// in the way never yields. `blocker` is that file.
const home = mkdtempSync(join(tmpdir(), "acp-unwritable-output-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));
const env = { HOME: home, ACP_HOME: home };
const blocker = join(home, "a-file");
writeFileSync(blocker, "not a directory\n");
const verify = fileURLToPath(new URL("../../../examples/verify/accepts-send/", import.meta.url));

describe("an output file the person named that cannot be written: exit 1 naming it, not 'internal error'", () => {
  it("acp policy verify --out into a directory that does not exist", async () => {
    const out = await runCli(
      ["policy", "verify", "--policy", join(verify, "policy.yml"), "--intent", join(verify, "intent.json")].concat([
        "--out",
        "no-such-dir/cex.jsonl",
      ]),
      { env, cwd: home },
    );
    expect(out.code).toBe(1);
    expect(out.stderr).toBe(
      `acp: cannot write \`${join(home, "no-such-dir/cex.jsonl")}\`: no such directory (create \`${join(home, "no-such-dir")}\` first)\n`,
    );
  });

  it("acp claim issuer keygen --out and issue --out under a file", async () => {
    const keygen = await runCli(["claim", "issuer", "keygen", "--out", join(blocker, "issuer.key")], { env });
    expect(keygen.code).toBe(1);
    expect(keygen.stderr).toBe(
      `acp: cannot write \`${join(blocker, "issuer.key")}\`: \`${blocker}\` is not a directory\n`,
    );
    expect((await runCli(["claim", "issuer", "keygen"], { env })).code).toBe(0);
    const issue = await runCli(
      ["claim", "issuer", "issue", "--subject", "a", "--audience", "http://api.localhost:8080"].concat([
        "--out",
        join(blocker, "a.token"),
      ]),
      { env },
    );
    expect(issue.code).toBe(1);
    expect(issue.stderr).toBe(`acp: cannot write \`${join(blocker, "a.token")}\`: \`${blocker}\` is not a directory\n`);
    expect(issue.stdout).toBe("");
  });

  it("acp intent new -o into a directory that does not exist says which to create", async () => {
    const out = await runCli(["intent", "new", "--template", "triage-my-inbox", "-o", "intents/x.yml"], {
      env,
      cwd: home,
    });
    expect(out.code).toBe(1);
    expect(out.stderr).toBe(
      `acp: cannot write \`${join(home, "intents/x.yml")}\`: no such directory (create \`${join(home, "intents")}\` first)\n`,
    );
  });
});

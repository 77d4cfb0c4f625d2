/**
 * `acp run` gives the agent a session keyring of its own: the kernel's keyrings are not namespaced, so an agent
 * started as it was possessed every key in acp's session keyring (a Kerberos ticket cache of type KEYRING, a
 * token stored with keyctl) and could read it. Real processes (the built `bin/acp.js`), started under a few
 * lines of Perl that join a fresh session keyring and put a secret key in it, as a person's login would.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEYCTL_SYSCALL } from "@acp/proxy";
import { scratchDir } from "../../proxy/test/sandbox/net-fixture.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const ACP = join(ROOT, "packages/cli/bin/acp.js");
const PERL = "/usr/bin/perl";
const USER = "cloudsdk";
const SECRET = "keyring-secret-5e9a1c";
const KEYCTL = KEYCTL_SYSCALL[process.arch];
// add_key(2), which the sandbox never calls: only this test does (x86-64 and arm64 numbers). Perl passes a
// string argument as a pointer to its buffer, and wants it in a variable (a literal is read-only to it)
const ADD_KEY = ({ x64: 248, arm64: 217 } as Record<string, number | undefined>)[process.arch];

/** Joins a new session keyring, adds the user key `acp-keyring-test` holding SECRET to it, then runs ARGV. */
const WITH_KEY = `syscall(${KEYCTL}, 1, 0) >= 0 or die "join: $!\\n";
my ($type, $name, $data) = ("user", "acp-keyring-test", "${SECRET}");
syscall(${ADD_KEY}, $type, $name, $data, length($data), -3) >= 0 or die "add_key: $!\\n";
exec { $ARGV[0] } @ARGV or die "exec: $!\\n";`;

/** The agent: looks the key up in its session keyring and reads it (what any program can do with a key it possesses). */
const PROBE = `my ($type, $name) = ("user", "acp-keyring-test");
my $id = syscall(${KEYCTL}, 10, -3, $type, $name, 0);
if ($id < 0) { print "not found: $!\\n"; exit 0 }
my $buf = "\\0" x 64;
my $len = syscall(${KEYCTL}, 11, $id, $buf, 64);
print $len < 0 ? "not readable: $!\\n" : "read: " . substr($buf, 0, $len) . "\\n";`;

/** A working directory with ACP's home in it, for root and for the unprivileged user. */
const work: Record<string, { path: string; remove(): void }> = {};

beforeAll(() => {
  execFileSync("npx", ["tsc", "-b", "packages/cli"], { cwd: ROOT, stdio: "ignore" });
  const uid = Number(execFileSync("id", ["-u", USER], { encoding: "utf8" }).trim());
  work["root"] = scratchDir("acp-run-keyring-");
  work[USER] = scratchDir("acp-run-keyring-", uid);
  for (const user of ["root", USER]) {
    const init = withKey(user, ["env", "-i", ...env(user), process.execPath, ACP, "init", "--no-passphrase"]);
    expect(init.status, init.stderr).toBe(0);
  }
}, 120_000);

afterAll(() => {
  for (const dir of Object.values(work)) dir.remove();
});

function env(user: string): string[] {
  const dir = work[user]?.path ?? "";
  return [`PATH=${process.env["PATH"] ?? ""}`, `HOME=${dir}`, `ACP_HOME=${join(dir, "home")}`];
}

/** Runs ARGV as `user` under WITH_KEY: its session keyring holds the secret key. */
function withKey(user: string, argv: string[]) {
  const wrapped = [PERL, "-e", WITH_KEY, "--", ...argv];
  const full = user !== "root" ? ["runuser", "-u", user, "--", ...wrapped] : wrapped;
  return spawnSync(full[0] ?? "", full.slice(1), { encoding: "utf8", cwd: work[user]?.path ?? "/", timeout: 60_000 });
}

describe("acp run and the kernel's session keyring", () => {
  it("this machine has what the test needs (Perl, the system call numbers)", () => {
    expect(existsSync(PERL), `${PERL} is needed by this test`).toBe(true);
    expect(KEYCTL, `keyctl's number on ${process.arch}`).toBeDefined();
    expect(ADD_KEY, `add_key's number on ${process.arch}`).toBeDefined();
  });

  it("outside acp run, a program in that session reads the key (the probe would notice a shared keyring)", () => {
    const r = withKey("root", [PERL, "-e", PROBE]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe(`read: ${SECRET}\n`);
  });

  it.each([
    ["netns", "root"],
    ["userns", "root"],
    ["userns", USER],
  ] as const)("under %s (as %s) the agent does not find the key of acp's session keyring", (level, user) => {
    const r = withKey(user, [
      "env",
      "-i",
      ...env(user),
      process.execPath,
      ACP,
      "run",
      "--isolation",
      level,
      "--",
      PERL,
      "-e",
      PROBE,
    ]);
    expect(r.status, r.stderr).toBe(0);
    // the search is refused outright now (the keyring filter: run-keyring-filter.test.ts)
    expect(r.stdout).toBe("not found: Operation not permitted\n");
    expect(r.stdout).not.toContain(SECRET);
    expect(r.stderr).not.toContain("shares this session's kernel keyring");
  });
});

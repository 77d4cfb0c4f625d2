/**
 * `acp run` keeps the agent from the kernel's keyrings with a seccomp filter: under `netns` the agent is uid 0
 * of the host, and the keyrings are not namespaced, so it could link root's user keyring (`@u`) into its own
 * session keyring and read, update or invalidate the keys root keeps there. Real processes as root (the built
 * `bin/acp.js`): a key is put in root's `@u`, the agent's `keyctl`, `add_key` and `request_key` calls fail
 * with EPERM, the key survives, and an ordinary agent command still runs.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { endianness } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyringAbis } from "@acp/proxy";
import { scratchDir } from "../../proxy/test/sandbox/net-fixture.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const ACP = join(ROOT, "packages/cli/bin/acp.js");
const PERL = "/usr/bin/perl";
const NATIVE = keyringAbis(process.arch, endianness())?.[0];
const [ADD_KEY, REQUEST_KEY, KEYCTL] = NATIVE?.calls ?? [-1, -1, -1];
const NAME = `acp-filter-test-${randomBytes(4).toString("hex")}`;
const SECRET = `root-user-keyring-${randomBytes(4).toString("hex")}`;
const EPERM = "Operation not permitted";

/** Perl that first joins a throwaway session keyring (so nothing is linked into the test runner's). */
const fresh = (body: string): string => `syscall(${KEYCTL}, 1, 0) >= 0 or die "join: $!\\n";\n${body}`;

/** Adds the user key NAME holding SECRET to root's user keyring (@u, -4); prints its id. */
const ADD = fresh(`my ($t, $n, $d) = ("user", "${NAME}", "${SECRET}");
my $id = syscall(${ADD_KEY}, $t, $n, $d, length($d), -4);
$id >= 0 or die "add_key: $!\\n";
print "$id\\n";`);

/** What root does with the key outside acp run: link @u into its session keyring, then read the key. */
const READ = fresh(`syscall(${KEYCTL}, 8, -4, -3) >= 0 or die "link: $!\\n";
my $buf = "\\0" x 128;
my $len = syscall(${KEYCTL}, 11, $ARGV[0] + 0, $buf, 128);
print $len < 0 ? "not readable: $!\\n" : "read: " . substr($buf, 0, $len) . "\\n";`);

/** The agent: everything it would do with root's key, each call's outcome on a line. */
const AGENT = `my $id = $ARGV[0] + 0; # a number, not a pointer to the string
my $said = sub { my ($what, $r) = @_; print "$what: " . ($r < 0 ? "$!" : "ok $r") . "\\n" };
$said->("link", syscall(${KEYCTL}, 8, -4, -3));
my $buf = "\\0" x 128;
$said->("read", syscall(${KEYCTL}, 11, $id, $buf, 128));
my ($t, $n, $d) = ("user", "${NAME}", "changed");
$said->("add_key", syscall(${ADD_KEY}, $t, $n, $d, length($d), -4));
$said->("request_key", syscall(${REQUEST_KEY}, $t, $n, 0, 0));
$said->("invalidate", syscall(${KEYCTL}, 21, $id));`;

let work: { path: string; remove(): void };
let keyId = "";

function perl(program: string, args: string[] = []) {
  return spawnSync(PERL, ["-e", program, "--", ...args], { encoding: "utf8", timeout: 30_000 });
}

beforeAll(() => {
  execFileSync("npx", ["tsc", "-b", "packages/cli"], { cwd: ROOT, stdio: "ignore" });
  work = scratchDir("acp-run-keyfilter-");
  const init = acp(["init", "--no-passphrase"]);
  expect(init.status, init.stderr).toBe(0);
  const added = perl(ADD);
  expect(added.status, added.stderr).toBe(0);
  keyId = added.stdout.trim();
}, 120_000);

afterAll(() => {
  // unlink the key from root's user keyring (the garbage collector then takes it)
  if (keyId !== "") perl(fresh(`syscall(${KEYCTL}, 9, ${keyId}, -4);`));
  work.remove();
});

function acp(args: string[]) {
  const env = [`PATH=${process.env["PATH"] ?? ""}`, `HOME=${work.path}`, `ACP_HOME=${join(work.path, "home")}`];
  return spawnSync("env", ["-i", ...env, process.execPath, ACP, ...args], {
    encoding: "utf8",
    cwd: work.path,
    timeout: 60_000,
  });
}

describe("acp run and root's user keyring", () => {
  it("this machine has what the test needs (root, Perl, the system call numbers)", () => {
    expect(process.getuid?.(), "the test runs as root").toBe(0);
    expect(NATIVE, `the keyring calls' numbers on ${process.arch}`).toBeDefined();
    expect(keyId).toMatch(/^\d+$/);
  });

  it("outside acp run, root links its user keyring and reads the key (what the agent would do)", () => {
    const r = perl(READ, [keyId]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe(`read: ${SECRET}\n`);
  });

  it.each(["netns", "userns"] as const)(
    "under %s the agent's keyctl, add_key and request_key fail with EPERM, and root's key survives",
    (level) => {
      const r = acp(["run", "--isolation", level, "--", PERL, "-e", AGENT, "--", keyId]);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toBe(
        ["link", "read", "add_key", "request_key", "invalidate"].map((what) => `${what}: ${EPERM}\n`).join(""),
      );
      expect(r.stdout).not.toContain(SECRET);
      const after = perl(READ, [keyId]);
      expect(after.stdout).toBe(`read: ${SECRET}\n`);
    },
  );

  it.each(["netns", "userns"] as const)("under %s an ordinary agent command still runs", (level) => {
    const r = acp(["run", "--isolation", level, "--", "sh", "-c", "echo still works; ls / >/dev/null; exit 3"]);
    expect(r.status, r.stderr).toBe(3);
    expect(r.stdout).toBe("still works\n");
  });
});

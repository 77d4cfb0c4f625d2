/**
 * `acp run` hides the kernel's key list from the agent: the keyrings are not namespaced, and `/proc/keys`
 * lists every key the reader may view with its owner and description (a Kerberos principal, a service's
 * name), root's keys among them when acp runs as root (under `netns` and `userns` alike); `/proc/key-users`
 * counts every user's keys. Real processes as root (the built `bin/acp.js`): a key with a telling description
 * is put in root's `@u`; outside acp run root's `/proc/keys` lists it, inside the agent reads both files
 * empty, and an ordinary agent command still runs.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
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
const [ADD_KEY, , KEYCTL] = NATIVE?.calls ?? [-1, -1, -1];
/** The key's description: what /proc/keys would show the agent. */
const NAME = `acp-proc-keys-${randomBytes(4).toString("hex")}/host.example.org`;

/** Perl that first joins a throwaway session keyring (so nothing is linked into the test runner's). */
const fresh = (body: string): string => `syscall(${KEYCTL}, 1, 0) >= 0 or die "join: $!\\n";\n${body}`;

/** Adds the user key NAME to root's user keyring (@u, -4); prints its id. */
const ADD = fresh(`my ($t, $n, $d) = ("user", "${NAME}", "not the point");
my $id = syscall(${ADD_KEY}, $t, $n, $d, length($d), -4);
$id >= 0 or die "add_key: $!\\n";
print "$id\\n";`);

let work: { path: string; remove(): void };
let keyId = "";

function perl(program: string) {
  return spawnSync(PERL, ["-e", program], { encoding: "utf8", timeout: 30_000 });
}

beforeAll(() => {
  execFileSync("npx", ["tsc", "-b", "packages/cli"], { cwd: ROOT, stdio: "ignore" });
  work = scratchDir("acp-run-proc-keys-");
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

describe("acp run and the kernel's key list", () => {
  it("this machine has what the test needs (root, Perl, the system call numbers, a key root lists)", () => {
    expect(process.getuid?.(), "the test runs as root").toBe(0);
    expect(NATIVE, `the keyring calls' numbers on ${process.arch}`).toBeDefined();
    expect(keyId).toMatch(/^\d+$/);
    // outside acp run, root's /proc/keys names the key (what the agent would read)
    expect(readFileSync("/proc/keys", "utf8")).toContain(NAME);
    expect(readFileSync("/proc/key-users", "utf8")).toMatch(/^\s*0:/m);
  });

  it.each(["netns", "userns"] as const)("under %s the agent reads /proc/keys and /proc/key-users empty", (level) => {
    const script = 'for f in /proc/keys /proc/key-users; do echo "$f:"; cat "$f"; done';
    const r = acp(["run", "--isolation", level, "--", "sh", "-c", script]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe("/proc/keys:\n/proc/key-users:\n");
    expect(r.stdout).not.toContain(NAME);
  });

  it.each(["netns", "userns"] as const)("under %s the agent cannot write over the cover or take it away", (level) => {
    const script = "echo x > /proc/keys || echo refused; umount /proc/keys 2>/dev/null || echo kept; cat /proc/keys";
    const r = acp(["run", "--isolation", level, "--", "sh", "-c", script]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe("refused\nkept\n");
  });

  it.each(["netns", "userns"] as const)("under %s an ordinary agent command still runs", (level) => {
    const r = acp(["run", "--isolation", level, "--", "sh", "-c", "echo still works; ls /proc >/dev/null; exit 3"]);
    expect(r.status, r.stderr).toBe(3);
    expect(r.stdout).toBe("still works\n");
  });
});

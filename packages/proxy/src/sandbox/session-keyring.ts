/**
 * A session keyring of the agent's own. The kernel's keyrings are not namespaced by the mount, network, IPC or
 * PID namespaces, and a user namespace keeps the session keyring the process already had: started as it is,
 * the agent would possess every key linked in `acp`'s session keyring (a Kerberos credential cache of type
 * `KEYRING`, fscrypt or eCryptfs keys, a token stored with `keyctl`, keys a PAM module added at login) and
 * could read, change or unlink them. `unshare`, `setpriv`, `prlimit` and Node cannot join a new session
 * keyring; Perl's `syscall` can, and Perl is part of every Debian and Ubuntu system (`perl-base`). So the agent
 * is started through a few lines of Perl that join a new, empty, anonymous session keyring
 * (`KEYCTL_JOIN_SESSION_KEYRING`), check that the session keyring is now that one, then set no_new_privs and
 * install a seccomp filter that makes `add_key`, `request_key` and `keyctl` fail with `EPERM`
 * (`keyring-filter.ts`: under `netns` the agent is uid 0 of the host and would otherwise link root's user
 * keyring), check that those calls now fail, and exec the agent.
 */
import { endianness as hostEndianness } from "node:os";
import { findExecutable, SYSTEM_PATH } from "./find-executable.js";
import { keyringAbis, keyringFilter, PRCTL_SYSCALL, type KeyringAbi } from "./keyring-filter.js";

/**
 * The number of the `keyctl(2)` system call on each architecture Node runs on (the kernel's syscall tables;
 * the newer architectures share the asm-generic one).
 */
export const KEYCTL_SYSCALL: Readonly<Record<string, number>> = {
  x64: 250,
  ia32: 288,
  arm: 311,
  arm64: 219,
  riscv64: 219,
  loong64: 219,
  ppc64: 271,
  s390x: 280,
};

/** How the init gives the agent its own session keyring (argv prefixes; see `sessionKeyring`). */
export interface SessionKeyring {
  /**
   * Put before the agent's argv (after `setpriv`): joins a new session keyring, installs the keyring filter,
   * then execs the rest.
   */
  readonly exec: readonly string[];
  /**
   * Run by the init before it reports ready: exits 0 only when joining a new session keyring and installing
   * the keyring filter (the keyring calls then failing with `EPERM`) work here.
   */
  readonly check: readonly string[];
}

/**
 * The Perl program: `KEYCTL_GET_KEYRING_ID` of `@s` (operation 0, keyring -3) before and after
 * `KEYCTL_JOIN_SESSION_KEYRING` (operation 1, no name: a new anonymous keyring); the join must return a
 * keyring, and `@s` must then be that keyring and not the one before. Then `PR_SET_NO_NEW_PRIVS` (38) and
 * `PR_SET_SECCOMP` (22) with `SECCOMP_MODE_FILTER` (2) and the filter as a `struct sock_fprog` (its length,
 * then, aligned, a pointer to the instructions: Perl's `pack` "p"), and `add_key`, `request_key` and `keyctl`
 * must each fail with `EPERM` (1). Anything else stops it (exit 125) before the agent starts; an architecture
 * value that were wrong kills it (SIGSYS) at its next system call, which stops it too.
 */
function program(abis: readonly KeyringAbi[], prctl: number, then: "exec" | "exit"): string {
  const [native] = abis;
  if (native === undefined) throw new Error("session keyring: no ABI");
  const [addKey, requestKey, keyctl] = native.calls;
  const filter = keyringFilter(abis);
  const words = filter.map((i) => `${i.code},${i.jt},${i.jf},${i.k}`).join(", ");
  // the check's stderr goes into the init's own message, which names acp run already
  const who = then === "exit" ? "" : "acp run: ";
  const stop = `${who}cannot keep the agent from the kernel's keyrings`;
  return [
    `my $before = syscall(${keyctl}, 0, -3, 0);`,
    `my $joined = syscall(${keyctl}, 1, 0);`,
    `my $why = "$!";`,
    `my $after = syscall(${keyctl}, 0, -3, 0);`,
    `if ($joined < 0 || $after != $joined || $after == $before) {`,
    `  print STDERR "${who}cannot give the agent a session keyring of its own: " . ($joined < 0 ? $why : "the session keyring did not change") . "\\n";`,
    `  exit 125;`,
    `}`,
    `my $filter = pack("(SCCL)*", ${words});`,
    `my $fprog = pack("S x![p] p", ${filter.length}, $filter);`,
    `if (syscall(${prctl}, 38, 1, 0, 0, 0) != 0 || syscall(${prctl}, 22, 2, $fprog, 0, 0) != 0) {`,
    `  print STDERR "${stop}: cannot install the seccomp filter: $!\\n";`,
    `  exit 125;`,
    `}`,
    `for my $nr (${addKey}, ${requestKey}, ${keyctl}) {`,
    `  my $r = syscall($nr, 0, -3, 0, 0, 0);`,
    `  if ($r != -1 || $! + 0 != 1) { print STDERR "${stop}: system call $nr still answers after the seccomp filter\\n"; exit 125; }`,
    `}`,
    then === "exit"
      ? `exit 0;`
      : `exec { $ARGV[0] } @ARGV; print STDERR "acp run: cannot start the agent: $!\\n"; exit 127;`,
  ].join("\n");
}

/**
 * The wrapper for this host, or null when there is none: no `perl` in the system's own directories (never
 * one on PATH, which the agent may have written on an earlier run: the check runs as the sandbox's init, with
 * its capabilities) or an architecture whose `keyctl`, `prctl` or keyring filter numbers are not known here.
 */
export function sessionKeyring(
  arch: string = process.arch,
  find: (name: string) => string | null = (name) => findExecutable(name, SYSTEM_PATH, "/"),
  endianness: "LE" | "BE" = hostEndianness(),
): SessionKeyring | null {
  const abis = keyringAbis(arch, endianness);
  const prctl = PRCTL_SYSCALL[arch];
  const perl = find("perl");
  if (KEYCTL_SYSCALL[arch] === undefined || abis === undefined || prctl === undefined || perl === null) return null;
  return keyringWrapper(perl, abis, prctl);
}

/**
 * The wrapper with this Perl, these ABIs (the first the one Perl runs as: its keyring calls join the session
 * keyring and are checked) and this `prctl` number; `sessionKeyring` picks them for the host.
 */
export function keyringWrapper(perl: string, abis: readonly KeyringAbi[], prctl: number): SessionKeyring {
  return {
    exec: [perl, "-e", program(abis, prctl, "exec"), "--"],
    check: [perl, "-e", program(abis, prctl, "exit")],
  };
}

/**
 * A session keyring of the agent's own. The kernel's keyrings are not namespaced by the mount, network, IPC or
 * PID namespaces, and a user namespace keeps the session keyring the process already had: started as it is,
 * the agent would possess every key linked in `acp`'s session keyring (a Kerberos credential cache of type
 * `KEYRING`, fscrypt or eCryptfs keys, a token stored with `keyctl`, keys a PAM module added at login) and
 * could read, change or unlink them. `unshare`, `setpriv`, `prlimit` and Node cannot join a new session
 * keyring; Perl's `syscall` can, and Perl is part of every Debian and Ubuntu system (`perl-base`). So the agent
 * is started through a few lines of Perl that join a new, empty, anonymous session keyring
 * (`KEYCTL_JOIN_SESSION_KEYRING`), check that the session keyring is now that one, and exec the agent.
 */
import { findExecutable, SYSTEM_PATH } from "./find-executable.js";

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
  /** Put before the agent's argv (after `setpriv`): joins a new session keyring, then execs the rest. */
  readonly exec: readonly string[];
  /** Run by the init before it reports ready: exits 0 only when joining a new session keyring works here. */
  readonly check: readonly string[];
}

/**
 * The Perl program: `KEYCTL_GET_KEYRING_ID` of `@s` (operation 0, keyring -3) before and after
 * `KEYCTL_JOIN_SESSION_KEYRING` (operation 1, no name: a new anonymous keyring); the join must return a
 * keyring, and `@s` must then be that keyring and not the one before. Anything else stops it (exit 125)
 * before the agent starts.
 */
function program(syscall: number, then: "exec" | "exit"): string {
  return [
    `my $before = syscall(${syscall}, 0, -3, 0);`,
    `my $joined = syscall(${syscall}, 1, 0);`,
    `my $why = "$!";`,
    `my $after = syscall(${syscall}, 0, -3, 0);`,
    `if ($joined < 0 || $after != $joined || $after == $before) {`,
    `  print STDERR "acp run: cannot give the agent a session keyring of its own: " . ($joined < 0 ? $why : "the session keyring did not change") . "\\n";`,
    `  exit 125;`,
    `}`,
    then === "exit"
      ? `exit 0;`
      : `exec { $ARGV[0] } @ARGV; print STDERR "acp run: cannot start the agent: $!\\n"; exit 127;`,
  ].join("\n");
}

/**
 * The wrapper for this host, or null when there is none: no `perl` in the system's own directories (never
 * one on PATH, which the agent may have written on an earlier run: the check runs as the sandbox's init, with
 * its capabilities) or an architecture whose `keyctl` number is not known here.
 */
export function sessionKeyring(
  arch: string = process.arch,
  find: (name: string) => string | null = (name) => findExecutable(name, SYSTEM_PATH, "/"),
): SessionKeyring | null {
  const syscall = KEYCTL_SYSCALL[arch];
  const perl = find("perl");
  if (syscall === undefined || perl === null) return null;
  return {
    exec: [perl, "-e", program(syscall, "exec"), "--"],
    check: [perl, "-e", program(syscall, "exit")],
  };
}

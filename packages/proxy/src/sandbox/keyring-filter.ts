/**
 * The seccomp filter that keeps the agent from the kernel's keyrings. A session keyring of its own
 * (`session-keyring.ts`) does not do it alone: the keyrings are not namespaced, and under `netns` the agent is
 * uid 0 of the host, so it can link root's user keyring (`@u`) into its session keyring and read, update or
 * invalidate the keys there. Like Docker's default seccomp profile, the filter makes `add_key`, `request_key`
 * and `keyctl` fail with `EPERM` and lets every other system call through. It is a classic BPF program over
 * `struct seccomp_data` (`nr` at offset 0, `arch` at 4), built here and installed by the same Perl wrapper,
 * after it has joined the new session keyring (which takes `keyctl` itself).
 */

/** One ABI whose system calls the filter knows: its `AUDIT_ARCH_*` value and its keyring calls' numbers. */
export interface KeyringAbi {
  readonly name: string;
  /** `seccomp_data.arch` for this ABI (`AUDIT_ARCH_*` in linux/audit.h). */
  readonly audit: number;
  /** `add_key`, `request_key` and `keyctl` (the kernel's syscall tables). */
  readonly calls: readonly [number, number, number];
  /** x86-64: a number with `__X32_SYSCALL_BIT` is an x32 system call of the same arch (refused, `ENOSYS`). */
  readonly x32?: boolean;
}

const X86_64: KeyringAbi = { name: "x86-64", audit: 0xc000003e, calls: [248, 249, 250], x32: true };
const I386: KeyringAbi = { name: "x86", audit: 0x40000003, calls: [286, 287, 288] };
const AARCH64: KeyringAbi = { name: "ARM64", audit: 0xc00000b7, calls: [217, 218, 219] };
const ARM: KeyringAbi = { name: "ARM", audit: 0x40000028, calls: [309, 310, 311] };
const RISCV64: KeyringAbi = { name: "RISC-V 64", audit: 0xc00000f3, calls: [217, 218, 219] };
const LOONG64: KeyringAbi = { name: "LoongArch 64", audit: 0xc0000102, calls: [217, 218, 219] };
const PPC64LE: KeyringAbi = { name: "POWER 64 (little-endian)", audit: 0xc0000015, calls: [269, 270, 271] };
const PPC64: KeyringAbi = { name: "POWER 64 (big-endian)", audit: 0x80000015, calls: [269, 270, 271] };
const S390X: KeyringAbi = { name: "s390x", audit: 0x80000016, calls: [278, 279, 280] };

/**
 * The ABIs the filter lets run on each architecture Node runs on (`process.arch`), the first the native one.
 * An x86-64 or ARM64 kernel also runs 32-bit programs (x86, ARM): their own numbers are filtered too, so such
 * a program works inside. A system call of any other ABI kills the process (`SECCOMP_RET_KILL_PROCESS`, as
 * libseccomp does for an architecture its filter does not name): its numbers mean other calls, and letting
 * them through would let its keyring calls through.
 */
export function keyringAbis(arch: string, endianness: "LE" | "BE"): readonly KeyringAbi[] | undefined {
  switch (arch) {
    case "x64":
    case "ia32":
      return arch === "x64" ? [X86_64, I386] : [I386, X86_64];
    case "arm64":
      return [AARCH64, ARM];
    case "arm":
      return [ARM, AARCH64];
    case "riscv64":
      return [RISCV64];
    case "loong64":
      return [LOONG64];
    case "ppc64":
      return [endianness === "LE" ? PPC64LE : PPC64];
    case "s390x":
      return [S390X];
    default:
      return undefined;
  }
}

/** `prctl(2)`'s number on each architecture (the Perl wrapper sets no_new_privs and the filter with it). */
export const PRCTL_SYSCALL: Readonly<Record<string, number>> = {
  x64: 157,
  ia32: 172,
  arm: 172,
  arm64: 167,
  riscv64: 167,
  loong64: 167,
  ppc64: 171,
  s390x: 172,
};

/** One classic BPF instruction (`struct sock_filter`). */
export interface BpfInstruction {
  readonly code: number;
  readonly jt: number;
  readonly jf: number;
  readonly k: number;
}

/** The instruction codes the filter uses (linux/bpf_common.h). */
export const BPF = {
  /** `BPF_LD | BPF_W | BPF_ABS`: A = the 32-bit word of `seccomp_data` at k. */
  loadWord: 0x20,
  /** `BPF_JMP | BPF_JEQ | BPF_K`: A == k ? jt : jf. */
  jumpEqual: 0x15,
  /** `BPF_JMP | BPF_JSET | BPF_K`: (A & k) !== 0 ? jt : jf. */
  jumpSet: 0x45,
  /** `BPF_RET | BPF_K`: return k. */
  ret: 0x06,
} as const;

/** The filter's answers (linux/seccomp.h) and the errno values it gives. */
export const SECCOMP = {
  killProcess: 0x80000000,
  errno: 0x00050000,
  allow: 0x7fff0000,
  EPERM: 1,
  ENOSYS: 38,
  x32Bit: 0x40000000,
} as const;

type Step = { readonly code: number; readonly k: number; readonly jt?: string; readonly jf?: string } | string;

/** The filter for these ABIs (see `keyringAbis`): check the arch, refuse the keyring calls, allow the rest. */
export function keyringFilter(abis: readonly KeyringAbi[]): BpfInstruction[] {
  const steps: Step[] = [{ code: BPF.loadWord, k: 4 }];
  abis.forEach((abi, i) => steps.push({ code: BPF.jumpEqual, k: abi.audit, jt: `abi${i}` }));
  steps.push({ code: BPF.ret, k: SECCOMP.killProcess });
  abis.forEach((abi, i) => {
    steps.push(`abi${i}`, { code: BPF.loadWord, k: 0 });
    if (abi.x32 === true) steps.push({ code: BPF.jumpSet, k: SECCOMP.x32Bit, jt: "enosys" });
    for (const nr of abi.calls) steps.push({ code: BPF.jumpEqual, k: nr, jt: "eperm" });
    steps.push({ code: BPF.ret, k: SECCOMP.allow });
  });
  if (abis.some((abi) => abi.x32 === true)) steps.push("enosys", { code: BPF.ret, k: SECCOMP.errno | SECCOMP.ENOSYS });
  steps.push("eperm", { code: BPF.ret, k: SECCOMP.errno | SECCOMP.EPERM });
  // labels to instruction indexes, then the jumps relative to the instruction after each
  const at = new Map<string, number>();
  let n = 0;
  for (const s of steps) {
    if (typeof s === "string") at.set(s, n);
    else n++;
  }
  const out: BpfInstruction[] = [];
  const offset = (label: string | undefined): number => {
    if (label === undefined) return 0;
    const target = at.get(label);
    const skip = target === undefined ? -1 : target - out.length - 1;
    if (skip < 0 || skip > 255) throw new Error(`keyring filter: no jump to ${label}`);
    return skip;
  };
  for (const s of steps) {
    if (typeof s === "string") continue;
    out.push({ code: s.code, jt: offset(s.jt), jf: offset(s.jf), k: s.k });
  }
  return out;
}

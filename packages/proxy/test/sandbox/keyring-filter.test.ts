/**
 * The seccomp filter that keeps the agent from the kernel's keyrings (`keyringFilter`), run here by a small
 * classic-BPF interpreter over every architecture `acp` knows: the keyring calls of each ABI it names get EPERM,
 * x32 calls on x86-64 ENOSYS, another ABI is killed, everything else passes. The kernel runs it for real in
 * `packages/cli/test/run-keyring-filter.test.ts`.
 */
import { describe, expect, it } from "vitest";
import { KEYCTL_SYSCALL, keyringAbis, keyringFilter, PRCTL_SYSCALL, type BpfInstruction } from "../../src/index.js";

const KILL = 0x80000000;
const ALLOW = 0x7fff0000;
const EPERM = 0x00050001;
const ENOSYS = 0x00050026;

/** Runs the filter as the kernel would for one system call (`seccomp_data`: nr at 0, arch at 4). */
function run(filter: readonly BpfInstruction[], arch: number, nr: number): number {
  let a = 0;
  for (let pc = 0; pc < filter.length; pc++) {
    const i = filter[pc];
    if (i === undefined) break;
    if (i.code === 0x20) {
      if (i.k !== 0 && i.k !== 4) throw new Error(`load of offset ${i.k}`);
      a = i.k === 0 ? nr >>> 0 : arch >>> 0;
    } else if (i.code === 0x15) pc += a === i.k >>> 0 ? i.jt : i.jf;
    else if (i.code === 0x45) pc += (a & i.k) !== 0 ? i.jt : i.jf;
    else if (i.code === 0x06) return i.k >>> 0;
    else throw new Error(`instruction ${i.code}`);
  }
  throw new Error("ran off the end");
}

const ARCHES = Object.keys(KEYCTL_SYSCALL);
const SOME_CALLS = Array.from({ length: 600 }, (_, n) => n);

describe("keyringFilter", () => {
  it("knows the filter's numbers for every architecture it knows keyctl's, and agrees on keyctl", () => {
    for (const arch of ARCHES) {
      for (const endianness of ["LE", "BE"] as const) {
        const abis = keyringAbis(arch, endianness);
        expect(abis?.[0]?.calls[2], arch).toBe(KEYCTL_SYSCALL[arch]);
      }
      expect(PRCTL_SYSCALL[arch], arch).toBeDefined();
    }
    expect(keyringAbis("mips", "LE")).toBeUndefined();
    expect(keyringAbis("ppc64", "LE")?.[0]?.audit).toBe(0xc0000015);
    expect(keyringAbis("ppc64", "BE")?.[0]?.audit).toBe(0x80000015);
  });

  it.each(ARCHES)("on %s refuses add_key, request_key and keyctl of each ABI (EPERM) and passes the rest", (arch) => {
    const abis = keyringAbis(arch, "LE") ?? [];
    const filter = keyringFilter(abis);
    for (const abi of abis) {
      for (const nr of SOME_CALLS) {
        expect(run(filter, abi.audit, nr), `${abi.name} ${nr}`).toBe(abi.calls.includes(nr) ? EPERM : ALLOW);
      }
    }
  });

  it("kills a system call of an ABI it does not name (its numbers mean other calls)", () => {
    const filter = keyringFilter(keyringAbis("x64", "LE") ?? []);
    for (const foreign of [0xc00000b7, 0x40000028, 0xc00000f3, 0, 0xffffffff]) {
      expect(run(filter, foreign, 219)).toBe(KILL);
      expect(run(filter, foreign, 1)).toBe(KILL);
    }
    // on ARM64 an x86-64 call is foreign
    expect(run(keyringFilter(keyringAbis("arm64", "LE") ?? []), 0xc000003e, 250)).toBe(KILL);
  });

  it("answers an x32 call on x86-64 with ENOSYS (x32's keyctl is 250 with the x32 bit, not 250)", () => {
    const filter = keyringFilter(keyringAbis("x64", "LE") ?? []);
    for (const nr of [248, 249, 250, 0, 1, 59]) expect(run(filter, 0xc000003e, 0x40000000 + nr)).toBe(ENOSYS);
    // x86 (int 0x80) has no x32 bit: its calls are passed on or refused by their own numbers
    expect(run(filter, 0x40000003, 288)).toBe(EPERM);
    expect(run(filter, 0x40000003, 250)).toBe(ALLOW);
  });

  it("is a program the kernel takes: jumps forward within it, ending on a return", () => {
    for (const arch of ARCHES) {
      const filter = keyringFilter(keyringAbis(arch, "LE") ?? []);
      expect(filter.length).toBeLessThan(4096);
      expect(filter.at(-1)?.code).toBe(0x06);
      filter.forEach((i, pc) => {
        if (i.code !== 0x15 && i.code !== 0x45) return;
        expect(pc + 1 + i.jt).toBeLessThan(filter.length);
        expect(pc + 1 + i.jf).toBeLessThan(filter.length);
        expect(i.jt >= 0 && i.jt <= 255 && i.jf >= 0 && i.jf <= 255).toBe(true);
      });
    }
  });
});

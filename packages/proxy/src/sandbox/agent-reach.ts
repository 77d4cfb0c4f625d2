/**
 * Whether the agent can change a file ACP reads: its working directory (unless it is `/`, a covered
 * directory itself or in `/run`, which it never gets from the host) and each `--writable` path stay writable
 * inside the sandbox, and whatever lies in them, or is reached through a symbolic link in them, the agent
 * can rewrite. ACP's home is covered (read-only, empty), so nothing inside it counts.
 */
import { coveredRootAt, isInRuntimeDir } from "./covered-roots.js";
import { linkInWritable } from "./home-guard.js";
import { isWithin, realPathOrNull as real } from "./paths.js";

/** The host paths (real) the agent may change: the working directory as the sandbox keeps it, and `writable`. */
export function agentWritableRoots(cwd: string, writable: readonly string[]): string[] {
  const realCwd = real(cwd) ?? cwd;
  const shared = realCwd === "/" || coveredRootAt(realCwd) !== undefined || isInRuntimeDir(realCwd);
  return [...new Set([...(shared ? [] : [realCwd]), ...writable.map((w) => real(w) ?? w)])];
}

/**
 * The writable path through which the agent could change `file` (absolute): the one it lies in, or the one
 * holding a symbolic link on the way to it. Undefined when the agent cannot change it, or it lies in `home`.
 */
export function agentCanChange(file: string, roots: readonly string[], home: string): string | undefined {
  const target = real(file) ?? file;
  const realHome = real(home) ?? home;
  if (isWithin(target, realHome)) return undefined;
  const holder = roots.find((r) => isWithin(target, r));
  return holder ?? linkInWritable(file, roots)?.holder;
}

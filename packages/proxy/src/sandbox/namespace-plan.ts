/**
 * What the init covers inside the mount namespace, worked out outside (where the real paths are visible):
 * ACP's home (read-only, empty), the shared scratch and runtime directories (`/tmp`, `/var/tmp`, `/run`,
 * `/dev/shm`: they hold Unix sockets that lead out of the sandbox, such as tmux, D-Bus, the resolver, Docker)
 * and the resolver configuration. A root that holds the agent's own program (a file named on its command
 * line, or the Node executable) stays visible, so an agent checked out under `/tmp` still runs.
 */
import { existsSync, realpathSync } from "node:fs";
import { isAbsolute, sep } from "node:path";
import { cwdInHome, setupFailed } from "./errors.js";
import type { CoverMount, SandboxInitConfig } from "./init-source.js";

/** Directories covered with an empty tmpfs, in this order (after the stage root). */
export const COVERED_ROOTS: readonly CoverMount[] = [
  { path: "/run", mode: "0755" },
  { path: "/tmp", mode: "1777" },
  { path: "/var/tmp", mode: "1777" },
  { path: "/dev/shm", mode: "1777" },
];

/** Whether `path` is `root` or lies under it. */
export function isWithin(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

function real(path: string): string | null {
  try {
    return realpathSync(path);
  } catch {
    return null;
  }
}

/** The inputs of the plan. */
export interface NamespacePlanInput {
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string;
  readonly home: string;
  readonly bridgeDir: string;
  readonly setpriv: string;
  readonly ports: SandboxInitConfig["ports"];
}

/** Works out the init's config; throws a `SandboxError` for a plan that cannot hide ACP's home. */
export function planNamespace(input: NamespacePlanInput): SandboxInitConfig {
  const home = real(input.home);
  const cwd = real(input.cwd) ?? input.cwd;
  const bridgeDir = real(input.bridgeDir) ?? input.bridgeDir;
  if (home !== null && isWithin(cwd, home)) throw cwdInHome(cwd, home);
  if (home !== null && isWithin(bridgeDir, home)) {
    throw setupFailed(`the bridge directory \`${bridgeDir}\` is inside ACP's home \`${home}\``);
  }
  const roots = uniqueRoots();
  const stage = roots.find((r) => !isWithin(bridgeDir, r.path) && !isWithin(cwd, r.path));
  if (stage === undefined) {
    throw setupFailed(`the bridge directory \`${bridgeDir}\` and the working directory \`${cwd}\` need another layout`);
  }
  const resolv = real("/etc/resolv.conf");
  // The agent's own program must stay visible: a root that holds the executable or a file named on the
  // command line (an agent checked out under /tmp, say) is left uncovered rather than hiding the agent.
  const exposed = [process.execPath, ...input.argv.filter((a) => isAbsolute(a))]
    .map((p) => real(p))
    .filter((p): p is string => p !== null);
  const covered = roots.filter((r) => r !== stage && !exposed.some((p) => isWithin(p, r.path)));
  const underCovered = (p: string): boolean => covered.some((r) => isWithin(p, r.path));
  return {
    argv: input.argv,
    env: input.env,
    cwd,
    setpriv: input.setpriv,
    stage,
    bridgeDir,
    cover: covered,
    home,
    keepCwd: underCovered(cwd),
    resolvConf: resolv !== null && !underCovered(resolv) ? resolv : null,
    ports: input.ports,
  };
}

/** The covered roots that exist here, by real path, without duplicates (`/var/run` is usually `/run`). */
function uniqueRoots(): CoverMount[] {
  const seen = new Set<string>();
  const out: CoverMount[] = [];
  for (const root of COVERED_ROOTS) {
    const path = real(root.path);
    if (path === null || path === "/" || seen.has(path) || !existsSync(path)) continue;
    if (out.some((r) => isWithin(path, r.path) || isWithin(r.path, path))) continue;
    seen.add(path);
    out.push({ path, mode: root.mode });
  }
  return out;
}

/**
 * What the init covers inside the mount namespace, worked out outside (where the real paths are visible):
 * ACP's home (read-only, empty), the shared scratch and runtime directories (`/tmp`, `/var/tmp`, `/run`,
 * `/dev/shm`: they hold Unix sockets that lead out of the sandbox, such as tmux, D-Bus, the resolver, Docker)
 * and the resolver configuration. What the agent needs from a covered directory is bound back, and only that:
 * the working directory and the `--writable` paths, and the entry right under the covered directory that holds
 * the agent's own program (a file named on its command line, or the Node executable), so an agent checked out
 * under `/tmp` still runs without the rest of `/tmp` (and its sockets) coming back with it. Everything else is
 * read-only: only the covers, the working directory (unless it is `/`) and the `--writable` paths stay writable.
 * The home's socket directories (`~/.ssh`, `~/.gnupg`, …) are covered with read-only copies of their files
 * (`planSocketDirCovers`), even inside the working directory.
 */
import { existsSync, statSync } from "node:fs";
import { isAbsolute, join, relative, sep } from "node:path";
import { COVERED_ROOTS, coveredRootAbove, coveredRootAt, isInRuntimeDir, runtimeDirCover } from "./covered-roots.js";
import { cwdInHome, hostSockets, setupFailed } from "./errors.js";
import { findHostChannel } from "./host-sockets.js";
import { homeLinkWritable, pinnedDirectories } from "./home-guard.js";
import type { CoverMount, KeptPath, SandboxInitConfig } from "./init-source.js";
import type { CpuCap } from "./cpu-cap.js";
import type { MemoryCap } from "./memory-cap.js";
import type { ProcessCap } from "./process-cap.js";
import type { SessionKeyring } from "./session-keyring.js";
import { findHomeAliases, isInHome } from "./home-aliases.js";
import { findUserSockets } from "./home-sockets.js";
import { isWithin, realPathOrNull } from "./paths.js";
import { planSocketDirCovers } from "./socket-dir-covers.js";
import { checkWritablePaths } from "./writable-paths.js";

export { COVERED_ROOTS };

const real = realPathOrNull;

/** The inputs of the plan. */
export interface NamespacePlanInput {
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string;
  readonly home: string;
  readonly bridgeDir: string;
  readonly setpriv: string;
  readonly ports: SandboxInitConfig["ports"];
  /** Absolute paths the agent may change besides its working directory (`--writable`). */
  readonly writable?: readonly string[];
  /** The cap on the sandbox's processes, when one can be applied (`ProcessCap`). */
  readonly processCap?: ProcessCap | null;
  /** The cap on the sandbox's memory (`MemoryCap`), when one can be applied. */
  readonly memoryCap?: MemoryCap | null;
  /** The cap on the sandbox's CPU time (`CpuCap`), when there is one. */
  readonly cpuCap?: CpuCap | null;
  /** How the agent gets a session keyring of its own (`sessionKeyring`), when it can here. */
  readonly sessionKeyring?: SessionKeyring | null;
}

/** Works out the init's config; throws a `SandboxError` for a plan that cannot hide ACP's home. */
export function planNamespace(input: NamespacePlanInput): SandboxInitConfig {
  const home = real(input.home);
  const cwd = real(input.cwd) ?? input.cwd;
  const bridgeDir = real(input.bridgeDir) ?? input.bridgeDir;
  // the home reached at another path through a bind mount the host has: covered there too
  const aliases = home === null ? [] : findHomeAliases(home);
  if (aliases === undefined) {
    throw setupFailed("cannot read the mount table (/proc/self/mountinfo) to find where else ACP's home is reachable");
  }
  if (home !== null && isInHome(cwd, home, aliases)) throw cwdInHome(cwd, home);
  if (home !== null && isInHome(bridgeDir, home, aliases)) {
    throw setupFailed(`the bridge directory \`${bridgeDir}\` is inside ACP's home \`${home}\``);
  }
  // the bridge directory is bound into the sandbox whole: one that holds the home would show it there
  if (home !== null && [home, ...aliases.map((a) => a.path)].some((h) => isWithin(h, bridgeDir))) {
    throw setupFailed(
      `the bridge directory \`${bridgeDir}\` holds ACP's home \`${home}\`: bound into the sandbox, it would show the home to the agent (pass a --bridge-dir of its own, or leave it out for a fresh private one)`,
    );
  }
  const checked = checkWritablePaths(input.writable ?? [], input.home);
  if (!checked.ok) throw setupFailed(checked.issues.map((i) => i.message).join("; "));
  // the working directory stays writable, unless it is `/` (that would leave the whole host writable) or a
  // covered directory itself (`/tmp`: the agent works in an empty one of its own, never the host's sockets),
  // or lies in /run (`/run/user/UID`: a session's D-Bus, ssh-agent and display sockets)
  const shared = cwd === "/" || coveredRootAt(cwd) !== undefined || isInRuntimeDir(cwd);
  const writable = [...new Set([...(shared ? [] : [cwd]), ...checked.paths])];
  const linked = homeLinkWritable(input.home, writable);
  if (linked !== undefined) throw linked;
  const roots = uniqueRoots();
  // The agent's own program must stay visible: the executable and the files named on the command line (an
  // agent checked out under /tmp, say). Never a covered directory named itself (`--add-dir /tmp` would
  // uncover every program's sockets there), nor anything in /run (its runtime sockets)
  const exposed = [process.execPath, ...input.argv.filter((a) => isAbsolute(a))]
    .map((p) => real(p))
    .filter((p): p is string => p !== null && coveredRootAt(p) === undefined && !isInRuntimeDir(p));
  refuseHostChannels(shared ? undefined : cwd, exposed);
  const named = roots.filter((r) => exposed.includes(r.path));
  // the stage is covered first and the bound-back paths are staged in it: none of them may lie under it
  const stage = roots.find(
    (r) =>
      !named.includes(r) &&
      ![bridgeDir, cwd, ...exposed, ...writable].some((p) => isWithin(p, r.path)) &&
      !writable.some((w) => isWithin(r.path, w)),
  );
  if (stage === undefined) {
    throw setupFailed(`the bridge directory \`${bridgeDir}\` and the working directory \`${cwd}\` need another layout`);
  }
  const covered = roots.filter((r) => r !== stage && !named.includes(r));
  const underCovered = (p: string): boolean => covered.some((r) => isWithin(p, r.path));
  const pinned =
    home === null
      ? []
      : [...new Set([home, ...aliases.map((a) => a.path)].flatMap((h) => pinnedDirectories(h, writable)))].sort(
          (a, b) => a.split(sep).length - b.split(sep).length,
        );
  // $XDG_RUNTIME_DIR outside /run: covered whole, so a socket made there after the start stays out of reach
  // (also in the working directory: the cover rides along when that is bound onto itself, recursively; not
  // under a pinned directory, whose bind onto itself, not recursive, would hide it again)
  const runtime = runtimeDirCover(
    input.env["XDG_RUNTIME_DIR"],
    roots.map((r) => r.path),
    [bridgeDir, ...exposed, ...(home === null ? [] : [home]), ...aliases.map((a) => a.path), ...pinned],
    [cwd, ...writable],
  );
  const resolv = real("/etc/resolv.conf");
  const keep = keptPaths(shared ? writable : [cwd, ...writable], exposed, covered, shared ? undefined : cwd);
  const inside = [bridgeDir, ...(home === null ? [] : [home]), ...aliases.map((a) => a.path)];
  // the home's socket directories, covered whole: a socket made there after the start stays out of reach
  const socketDirs = planSocketDirCovers({
    env: input.env,
    covered: [...roots.map((r) => r.path), ...(runtime === undefined ? [] : [runtime.path])],
    kept: keep.map((k) => k.path),
    protect: [cwd, ...exposed, ...writable, ...inside],
    inside,
  });
  return {
    argv: input.argv,
    env: input.env,
    cwd,
    setpriv: input.setpriv,
    stage,
    bridgeDir,
    cover: runtime === undefined ? covered : [...covered, runtime],
    home,
    keep,
    resolvConf: resolv !== null && !underCovered(resolv) ? resolv : null,
    writable,
    // outside the covers, the outermost writable paths are bound onto themselves; under them, they are kept
    bindWritable: writable.filter((w) => !underCovered(w) && !writable.some((o) => o !== w && isWithin(w, o))),
    pinned,
    homeAliases: aliases,
    // the user's sockets outside the covers (the bridge's own, the home's and what the covers hide left alone)
    socketCovers: findUserSockets({
      env: input.env,
      given: writable,
      skip: [
        ...inside,
        ...roots.map((r) => r.path),
        ...(runtime === undefined ? [] : [runtime.path]),
        ...socketDirs.map((d) => d.path),
      ],
    }),
    socketDirs,
    ports: input.ports,
    processCap: input.processCap ?? null,
    memoryCap: input.memoryCap ?? null,
    cpuCap: input.cpuCap ?? null,
    sessionKeyring: input.sessionKeyring ?? null,
  };
}

/**
 * Throws `sandbox_host_sockets` when a tree that would be bound back from under a covered directory holds a
 * way out of the sandbox (`findHostChannel`): the working directory as it is, and for each exposed path the
 * entry right under its covered directory (what `keptPaths` binds). The `--writable` paths are checked by
 * `checkWritablePaths`.
 */
function refuseHostChannels(cwd: string | undefined, exposed: readonly string[]): void {
  const cwdRoot = cwd === undefined ? undefined : coveredRootAbove(cwd);
  if (cwd !== undefined && cwdRoot !== undefined) {
    const channel = findHostChannel(cwd, cwdRoot);
    if (channel !== undefined) {
      throw hostSockets(
        `the working directory \`${cwd}\` would be bound back from the host's shared \`${cwdRoot}\``,
        channel,
      );
    }
  }
  for (const path of exposed) {
    const root = coveredRootAbove(path);
    if (root === undefined) continue;
    const entry = join(root, relative(root, path).split(sep)[0] ?? "");
    const channel = findHostChannel(entry, root);
    if (channel !== undefined) {
      throw hostSockets(
        `\`${path}\` on the agent's command line brings back \`${entry}\` from the host's shared \`${root}\``,
        channel,
      );
    }
  }
}

/**
 * What is bound back over the covers: the working directory and the writable paths as they are (`asIs`), and
 * for each exposed path the entry right under its covered directory (`/tmp/agent` for
 * `/tmp/agent/src/main.js`: the checkout, not the rest of `/tmp`). A path inside another one kept is dropped
 * (the outer one brings it back), unless it is writable and the outer one is not: then both are kept, the
 * outer one first, so the working directory in a checkout brought back read-only stays writable.
 */
function keptPaths(
  asIs: readonly string[],
  exposed: readonly string[],
  covered: readonly CoverMount[],
  cwd: string | undefined,
): KeptPath[] {
  const paths: string[] = [];
  for (const p of [...asIs, ...exposed]) {
    const root = covered.find((r) => isWithin(p, r.path));
    if (root === undefined) continue;
    paths.push(asIs.includes(p) ? p : join(root.path, relative(root.path, p).split(sep)[0] ?? ""));
  }
  const unique = [...new Set(paths)];
  // a writable path inside a read-only entry (the working directory in the checkout a command-line path
  // brings back) is kept too, on top of it: the entry is read-only inside, and the outer one comes first
  return unique
    .filter((p) => !unique.some((q) => q !== p && isWithin(p, q) && (asIs.includes(q) || !asIs.includes(p))))
    .sort((a, b) => a.split(sep).length - b.split(sep).length)
    .map((path) => ({ path, directory: path === cwd || isDirectory(path) }));
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
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

/**
 * The released package (`npm run pack:release`) for the tests that install it: packing it, running npm
 * without blocking the test worker, and reading the repository's package-lock.json.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const REPO = fileURLToPath(new URL("../../..", import.meta.url));
export const PACKAGE = join(REPO, "packages", "cli");
/** Our packages the release carries under node_modules/@acp/. */
export const BUNDLED = ["claim", "core", "proxy", "server", "store"];

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command without blocking the test worker (a pack and an install take tens of seconds). */
export function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** `npm run pack:release -- --pack-destination DIR`: the tarball's path and the files npm packed. */
export async function packRelease(destination: string): Promise<{ tarball: string; files: string[] }> {
  const pack = await run(
    process.execPath,
    [join(PACKAGE, "scripts", "pack-release.mjs"), "--json", "--pack-destination", destination],
    PACKAGE,
  );
  if (pack.code !== 0) throw new Error(`pack-release failed:\n${pack.stderr}`);
  const [result] = JSON.parse(pack.stdout) as { filename: string; files: { path: string }[] }[];
  if (result === undefined) throw new Error("npm pack printed no package");
  return { tarball: join(destination, result.filename), files: result.files.map((f) => f.path) };
}

/**
 * npm's options for installing it offline as far as it can: third-party packages from npm's cache (the
 * repository's install filled it) or the registry; an @acp/* name npm asked a registry for goes to a closed
 * loopback port and fails the install (`--loglevel=http` prints each request, so a test can see none went).
 */
export const NPM_INSTALL_OPTIONS = [
  "--prefer-offline",
  "--no-audit",
  "--no-fund",
  "--fetch-retries=0",
  "--@acp:registry=http://127.0.0.1:9/",
  "--loglevel=http",
];

export interface LockEntry {
  version?: string;
  integrity?: string;
  link?: boolean;
}

/** The repository's package-lock.json entries, by path (`node_modules/x`, `packages/core/node_modules/y`). */
export function repositoryLock(): Record<string, LockEntry> {
  const lock = JSON.parse(readFileSync(join(REPO, "package-lock.json"), "utf8")) as {
    packages: Record<string, LockEntry>;
  };
  return lock.packages;
}

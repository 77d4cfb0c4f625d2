import { chmodSync, existsSync, mkdirSync, renameSync } from "node:fs";
import { ok, type PrivateKeyFileV1, type Result } from "@acp/core";
import { writeFileAtomic } from "./atomic-write.js";
import { homePaths, HOME_DIR_MODE, type HomePaths } from "./paths.js";
import { failWith, ioMessage } from "./result.js";

/** What {@link createHome} writes. */
export interface CreateHomeInput {
  readonly privateKeyFile: PrivateKeyFileV1;
  readonly configText: string;
  readonly policyText: string;
  /** Overwrite config, policy and keys of an existing home. */
  readonly force: boolean;
  /** Used to name a vault moved aside by `force` (`vault.json.replaced-<stamp>`). */
  readonly stamp: string;
}

/** What {@link createHome} did. */
export interface CreatedHome {
  readonly paths: HomePaths;
  /** Files that existed and were replaced (`force`). */
  readonly replaced: readonly string[];
  /** Where an old vault was moved (it was sealed with the old key), if there was one. */
  readonly vaultMovedTo?: string;
}

/**
 * Whether a directory holds an ACP home: a config, a policy, keys or a vault (what `acp init` writes, or a
 * person wrote by hand). A directory that merely exists is not a home: `acp proxy` run before `acp init`
 * creates it to keep `pins.json` there, and must not then take it for one (it would start a state.db and an
 * audit log there on the next start). Without one every command runs as before `acp init`; `acp init`
 * refuses to write over one without `--force`.
 */
export function isExistingHome(home: string): boolean {
  const p = homePaths(home);
  return [p.config, p.policy, p.privateKey, p.publicKey, p.vault].some((f) => existsSync(f));
}

/**
 * Creates `$ACP_HOME` (0700) with `keys/` (0700), `keys/private.key` and `keys/public.key`, `config.yml`
 * and `policy.yml` (0600), each written atomically. Refuses (`home_exists`) when the directory already
 * holds a home, unless `force`; with `force` an existing `vault.json` (sealed with the old key) is moved
 * aside, never deleted. Audit and state files are left alone.
 */
export function createHome(home: string, input: CreateHomeInput): Result<CreatedHome> {
  const paths = homePaths(home);
  if (!input.force && isExistingHome(home)) {
    return failWith(
      { code: "home_exists" },
      `\`${home}\` already holds an acp home (use --force to replace its config, policy and keys)`,
    );
  }
  try {
    mkdirSync(home, { recursive: true, mode: HOME_DIR_MODE });
    chmodSync(home, HOME_DIR_MODE);
    mkdirSync(paths.keysDir, { recursive: true, mode: HOME_DIR_MODE });
    chmodSync(paths.keysDir, HOME_DIR_MODE);
    const replaced = [paths.config, paths.policy, paths.privateKey, paths.publicKey].filter((f) => existsSync(f));
    let vaultMovedTo: string | undefined;
    if (existsSync(paths.vault)) {
      vaultMovedTo = `${paths.vault}.replaced-${input.stamp}`;
      renameSync(paths.vault, vaultMovedTo);
    }
    writeFileAtomic(paths.privateKey, `${JSON.stringify(input.privateKeyFile, null, 2)}\n`);
    writeFileAtomic(paths.publicKey, `${input.privateKeyFile.public_key}\n`);
    writeFileAtomic(paths.config, input.configText);
    writeFileAtomic(paths.policy, input.policyText);
    return ok(vaultMovedTo === undefined ? { paths, replaced } : { paths, replaced, vaultMovedTo });
  } catch (err) {
    return failWith({ code: "home_write_failed" }, `cannot create \`${home}\`: ${ioMessage(err)}`);
  }
}

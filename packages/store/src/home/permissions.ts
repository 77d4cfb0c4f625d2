import { lstatSync } from "node:fs";
import { allowedOwners } from "./owner.js";
import { homePaths, HOME_DIR_MODE, HOME_FILE_MODE } from "./paths.js";

/** One line of `acp doctor`. */
export interface HomeCheck {
  readonly status: "ok" | "warn" | "fail";
  readonly name: string;
  readonly detail: string;
}

function octal(mode: number): string {
  return (mode & 0o777).toString(8).padStart(4, "0");
}

function checkOne(
  path: string,
  label: string,
  wantDir: boolean,
  required: boolean,
  owners: readonly number[] | undefined,
): HomeCheck {
  const name = `permissions ${label}`;
  let st;
  try {
    st = lstatSync(path);
  } catch {
    return required
      ? { status: "fail", name, detail: `\`${path}\` is missing` }
      : { status: "ok", name, detail: "not created yet" };
  }
  if (st.isSymbolicLink()) return { status: "fail", name, detail: `\`${path}\` is a symbolic link` };
  if (wantDir !== st.isDirectory())
    return { status: "fail", name, detail: `\`${path}\` is not a ${wantDir ? "directory" : "file"}` };
  if (owners !== undefined && !owners.includes(st.uid))
    return { status: "fail", name, detail: `\`${path}\` is owned by uid ${st.uid}, not you` };
  const want = wantDir ? HOME_DIR_MODE : HOME_FILE_MODE;
  if ((st.mode & 0o077) !== 0) {
    return {
      status: "fail",
      name,
      detail: `mode ${octal(st.mode)}, readable or writable by others (want ${octal(want)}): run \`chmod ${want.toString(8)} ${path}\``,
    };
  }
  return { status: "ok", name, detail: `mode ${octal(st.mode)}` };
}

/**
 * Checks the permissions of a home: the home and `keys/` are 0700 directories, and every file ACP keeps
 * secrets or state in is 0600, owned by the current user (root: by root or the home's owner, the rule
 * `readVault` and the key reads refuse by: `allowedOwners`), not a symbolic link. Missing optional files
 * (vault, audit, state, memory key) are fine.
 */
export function checkHomePermissions(home: string, uid: number | undefined = process.getuid?.()): HomeCheck[] {
  const p = homePaths(home);
  const owners = allowedOwners(home, uid);
  return [
    checkOne(p.home, "home", true, true, owners),
    checkOne(p.keysDir, "keys/", true, true, owners),
    checkOne(p.privateKey, "keys/private.key", false, true, owners),
    checkOne(p.publicKey, "keys/public.key", false, true, owners),
    checkOne(p.config, "config.yml", false, true, owners),
    checkOne(p.policy, "policy.yml", false, true, owners),
    checkOne(p.vault, "vault.json", false, false, owners),
    checkOne(p.audit, "audit.jsonl", false, false, owners),
    checkOne(p.stateDb, "state.db", false, false, owners),
    checkOne(p.memoryKey, "memory.key", false, false, owners),
  ];
}

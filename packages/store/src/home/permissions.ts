import { lstatSync } from "node:fs";
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
  uid: number | undefined,
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
  if (uid !== undefined && st.uid !== uid)
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
 * secrets or state in is 0600, owned by the current user, not a symbolic link. Missing optional files
 * (vault, audit, state, memory key) are fine.
 */
export function checkHomePermissions(home: string, uid: number | undefined = process.getuid?.()): HomeCheck[] {
  const p = homePaths(home);
  return [
    checkOne(p.home, "home", true, true, uid),
    checkOne(p.keysDir, "keys/", true, true, uid),
    checkOne(p.privateKey, "keys/private.key", false, true, uid),
    checkOne(p.publicKey, "keys/public.key", false, true, uid),
    checkOne(p.config, "config.yml", false, true, uid),
    checkOne(p.policy, "policy.yml", false, true, uid),
    checkOne(p.vault, "vault.json", false, false, uid),
    checkOne(p.audit, "audit.jsonl", false, false, uid),
    checkOne(p.stateDb, "state.db", false, false, uid),
    checkOne(p.memoryKey, "memory.key", false, false, uid),
  ];
}

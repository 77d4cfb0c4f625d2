import { execFileSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  applyMigrations,
  listAppliedMigrations,
  openStateDb,
  stateDbPresent,
  StateDbUnsafeError,
  type StateDbMigration,
} from "../../src/sqlite/index.js";
import { stateDbOpenHooks } from "../../src/sqlite/open-state-db.js";

const dirs: string[] = [];
function tempDb(): string {
  const dir = mkdtempSync(join(tmpdir(), "acp-state-"));
  dirs.push(dir);
  return join(dir, "home", "state.db");
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const NOTES: StateDbMigration[] = [
  { id: "notes/001-table", up: "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL) STRICT" },
  { id: "notes/002-index", up: (db) => db.exec("CREATE INDEX notes_body ON notes (body)") },
];

describe("openStateDb", () => {
  it("creates the file 0600 in WAL mode with a busy timeout", () => {
    const path = tempDb();
    const db = openStateDb(path);
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(db.pragma("busy_timeout", { simple: true })).toBe(5000);
    expect(db.pragma("synchronous", { simple: true })).toBe(2);
    db.close();
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it("applies migrations once: opening again or re-applying changes nothing", () => {
    const path = tempDb();
    const db = openStateDb(path, { migrations: NOTES });
    expect(listAppliedMigrations(db)).toEqual(["notes/001-table", "notes/002-index"]);
    expect(applyMigrations(db, NOTES)).toEqual([]);
    db.close();
    const again = openStateDb(path, { migrations: NOTES });
    expect(listAppliedMigrations(again)).toEqual(["notes/001-table", "notes/002-index"]);
    again.close();
  });

  it("keeps its data when the file is reopened", () => {
    const path = tempDb();
    const db = openStateDb(path, { migrations: NOTES });
    db.prepare("INSERT INTO notes (body) VALUES (?)").run("kept");
    db.close();
    const again = openStateDb(path, { migrations: NOTES });
    expect(again.prepare("SELECT body FROM notes").all()).toEqual([{ body: "kept" }]);
    again.close();
  });

  it("applies later migrations added by another module without re-running earlier ones", () => {
    const db = openStateDb(":memory:", { migrations: NOTES.slice(0, 1) });
    expect(applyMigrations(db, NOTES)).toEqual(["notes/002-index"]);
    db.close();
  });

  it("rolls back a failing migration entirely and names it", () => {
    const db = openStateDb(":memory:");
    const bad: StateDbMigration = { id: "bad/001-half", up: "CREATE TABLE half (x INTEGER); SELECT nope FROM missing" };
    expect(() => applyMigrations(db, [bad])).toThrow(/migration `bad\/001-half` failed/);
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'half'").get()).toBeUndefined();
    expect(listAppliedMigrations(db)).toEqual([]);
    db.close();
  });

  it("refuses malformed and duplicated migration ids before applying anything", () => {
    const db = openStateDb(":memory:");
    expect(() => applyMigrations(db, [{ id: "Notes", up: "SELECT 1" }])).toThrow(/is not/);
    expect(() => applyMigrations(db, [NOTES[0] as StateDbMigration, NOTES[0] as StateDbMigration])).toThrow(/twice/);
    expect(listAppliedMigrations(db)).toEqual([]);
    db.close();
  });
});

describe("openStateDb: state.db must be a regular file the user owns", () => {
  it("creates state.db, -wal and -shm 0600 in a 0700 directory under umask 000", () => {
    const path = tempDb();
    const old = process.umask(0o000);
    try {
      const db = openStateDb(path, { migrations: NOTES });
      db.prepare("INSERT INTO notes (body) VALUES (?)").run("x");
      const files = readdirSync(dirname(path)).sort();
      expect(files).toEqual(["state.db", "state.db-shm", "state.db-wal"]);
      for (const file of files) expect(statSync(join(dirname(path), file)).mode & 0o777, file).toBe(0o600);
      expect(statSync(dirname(path)).mode & 0o777).toBe(0o700);
      db.close();
    } finally {
      process.umask(old);
    }
  });

  it("refuses a symbolic link planted at state.db, and neither creates nor writes its target", () => {
    const path = tempDb();
    mkdirSync(dirname(path), { recursive: true });
    const target = join(dirname(dirname(path)), "elsewhere.db");
    symlinkSync(target, path);
    expect(() => openStateDb(path)).toThrow(StateDbUnsafeError);
    expect(() => openStateDb(path)).toThrow(
      `\`${path}\` is a symbolic link: a home file must be a regular file you own`,
    );
    expect(existsSync(target)).toBe(false);
    writeFileSync(target, "");
    expect(() => openStateDb(path, { readonly: true })).toThrow("is a symbolic link");
    expect(statSync(target).size).toBe(0);
  });

  it("refuses a symbolic link planted at state.db-wal", () => {
    const path = tempDb();
    mkdirSync(dirname(path), { recursive: true });
    symlinkSync(join(dirname(dirname(path)), "elsewhere-wal"), `${path}-wal`);
    expect(() => openStateDb(path)).toThrow(`\`${path}-wal\` is a symbolic link`);
  });

  it("refuses a named pipe at state.db at once (opening it would wait for a writer)", () => {
    const path = tempDb();
    mkdirSync(dirname(path), { recursive: true });
    execFileSync("mkfifo", [path]);
    expect(() => openStateDb(path)).toThrow(
      `\`${path}\` is not a regular file (a pipe, a socket or a device): a home file must be a regular file you own`,
    );
    expect(() => openStateDb(path, { readonly: true })).toThrow("is not a regular file");
  });

  it("refuses a state.db that is a hard link to another file, and does not write that file", () => {
    const path = tempDb();
    mkdirSync(dirname(path), { recursive: true });
    const other = join(dirname(dirname(path)), "notes.txt");
    writeFileSync(other, "");
    linkSync(other, path);
    expect(() => openStateDb(path)).toThrow(`\`${path}\` has 2 names (a hard link to another file)`);
    expect(() => openStateDb(path, { readonly: true })).toThrow(StateDbUnsafeError);
    expect(statSync(other).size).toBe(0);
  });

  it.runIf(process.getuid?.() === 0)(
    "refuses a state.db another user owns (a process of uid 12345 opening root's)",
    () => {
      const path = tempDb();
      openStateDb(path).close();
      chmodSync(dirname(dirname(path)), 0o755);
      chmodSync(dirname(path), 0o755);
      chmodSync(path, 0o666); // so the ownership check, not the permission bits, is what stops it
      const dist = new URL("../../dist/index.js", import.meta.url).href;
      const script = `process.setgid(12345); process.setuid(12345);
      import(${JSON.stringify(dist)}).then((m) => { try { m.openStateDb(${JSON.stringify(path)}); console.log("opened"); } catch (e) { console.log(e.message); } });`;
      const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
      expect(out).toContain(`\`${path}\` is owned by uid 0, not you`);
    },
  );

  it.runIf(process.getuid?.() === 0)(
    "gives a state.db root creates in a person's home to that person, -wal and -shm too (sudo -E acp run)",
    () => {
      const path = tempDb();
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      chownSync(dirname(path), 12345, 12345);
      const db = openStateDb(path, { migrations: NOTES });
      db.prepare("INSERT INTO notes (body) VALUES ('x')").run();
      for (const file of ["state.db", "state.db-wal", "state.db-shm"]) {
        const st = statSync(join(dirname(path), file));
        expect([file, st.uid, st.gid, st.mode & 0o777]).toEqual([file, 12345, 12345, 0o600]);
      }
      db.close();
    },
  );

  it.runIf(process.getuid?.() === 0)("lets root open a person's state.db (sudo -E acp run with their home)", () => {
    const path = tempDb();
    openStateDb(path).close();
    chownSync(path, 12345, 12345);
    expect(() => openStateDb(path).close()).not.toThrow();
  });
});

describe("openStateDb: the file SQLite opens is the one checked", () => {
  afterEach(() => {
    delete stateDbOpenHooks.beforeSqliteOpen;
    delete stateDbOpenHooks.afterSqliteOpen;
  });

  /** A database file elsewhere the swap brings in, with one row the test can recognise. */
  function planted(path: string): string {
    const other = join(dirname(dirname(path)), "planted.db");
    const db = openStateDb(other, { migrations: NOTES });
    db.prepare("INSERT INTO notes (body) VALUES ('planted')").run();
    db.close();
    return other;
  }

  it("refuses a symbolic link swapped in after the check, and leaves its target as it was", () => {
    const path = tempDb();
    openStateDb(path).close();
    const other = planted(path);
    const before = statSync(other).mtimeMs;
    stateDbOpenHooks.beforeSqliteOpen = (p) => {
      rmSync(p);
      symlinkSync(other, p);
    };
    expect(() => openStateDb(path, { migrations: NOTES })).toThrow(StateDbUnsafeError);
    expect(() => openStateDb(path)).toThrow("is a symbolic link"); // and at the next open, at the check
    expect(statSync(other).mtimeMs).toBe(before);
  });

  it.runIf(process.platform === "linux")(
    "refuses a file swapped in for the open and swapped back before the name is looked at again",
    () => {
      const path = tempDb();
      openStateDb(path).close();
      const other = planted(path);
      const aside = `${path}.aside`;
      stateDbOpenHooks.beforeSqliteOpen = (p) => {
        renameSync(p, aside);
        renameSync(other, p);
      };
      stateDbOpenHooks.afterSqliteOpen = (p) => {
        renameSync(p, other);
        renameSync(aside, p);
      };
      expect(() => openStateDb(path, { migrations: NOTES })).toThrow(
        `\`${path}\` was replaced while it was being opened`,
      );
    },
  );

  it("opens as before when nothing is swapped, also beside another connection of the process", () => {
    const path = tempDb();
    const first = openStateDb(path, { migrations: NOTES });
    first.prepare("INSERT INTO notes (body) VALUES ('mine')").run();
    const second = openStateDb(path, { migrations: NOTES });
    first.close();
    const third = openStateDb(path, { readonly: true });
    expect(third.prepare("SELECT body FROM notes").all()).toEqual([{ body: "mine" }]);
    third.close();
    second.close();
  });
});

describe("stateDbPresent", () => {
  it("counts a dangling symbolic link as something there (existsSync said nothing was)", () => {
    const path = tempDb();
    mkdirSync(dirname(path), { recursive: true });
    expect(stateDbPresent(path)).toBe(false);
    symlinkSync(join(dirname(path), "gone.db"), path);
    expect(existsSync(path)).toBe(false);
    expect(stateDbPresent(path)).toBe(true);
  });
});

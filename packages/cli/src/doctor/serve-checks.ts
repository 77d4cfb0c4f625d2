/**
 * `acp doctor` on what `acp serve` reads: config.yml's `serve:` and `storage:` sections (checked as serve
 * checks them), a password written into `storage.url`, and whether the storage answers.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { explainStorageError, resolveStorageUrl, safeStorageUrl, STORAGE_URL_ENV } from "@acp/server/state";
import { openPostgresStore, type HomeCheck, type PostgresStore } from "@acp/store";
import { CliError } from "../exit-codes.js";
import { checkAuditAnchor, checkClock } from "./postgres-checks.js";
import { readConfigFile } from "../wiring/config-file.js";
import { checkServeConfig, type ServeConfig } from "../wiring/serve-config.js";

/** How long doctor waits for PostgreSQL to answer (connecting and `SELECT 1`). */
export const STORAGE_CHECK_TIMEOUT_MS = 3000;

/** The home config.yml's `serve:` / `storage:` sections, or null when there is no file or it does not parse. */
function readServeSections(home: string): { checks: HomeCheck[]; config: ServeConfig | null } {
  const path = join(home, "config.yml");
  if (!existsSync(path)) return { checks: [], config: {} };
  let values: Readonly<Record<string, unknown>>;
  try {
    values = readConfigFile(path, false).values;
  } catch (err) {
    if (!(err instanceof CliError)) throw err;
    return { checks: [{ status: "fail", name: "serve", detail: err.message }], config: null };
  }
  const checked = checkServeConfig(values);
  if (!checked.ok) {
    return {
      checks: checked.problems.map((p) => ({ status: "fail", name: "serve", detail: `config.yml: ${p}` })),
      config: null,
    };
  }
  const c = checked.value;
  const detail = [
    `acp serve: port ${c.port ?? 8787}`,
    `bind ${c.bind ?? "127.0.0.1"}`,
    c.publicUrl !== undefined ? `public URL ${c.publicUrl}` : null,
    `decision audit ${c.decisionAudit ?? "queued"}`,
    c.bearerToken !== undefined ? "bearer token sealed in config.yml" : null,
    c.approverToken !== undefined ? "approvers' token sealed in config.yml" : null,
    c.agentTokens !== undefined ? `agents' tokens of ${Object.keys(c.agentTokens).join(", ")}` : null,
    c.approverTokens !== undefined ? `approvers' tokens of ${Object.keys(c.approverTokens).join(", ")}` : null,
  ].filter((x) => x !== null);
  return { checks: [{ status: "ok", name: "serve", detail: detail.join(", ") }], config: c };
}

/** Whether a storage URL carries a password (in its user part or a `?password=` / `?sslpassword=` parameter). */
function holdsPassword(url: string): boolean {
  try {
    const parsed = new URL(url);
    if (parsed.password !== "") return true;
    return [...parsed.searchParams.entries()].some(([k, v]) => /pass|secret/i.test(k) && v !== "");
  } catch {
    return false;
  }
}

function reachable(url: string): Promise<PostgresStore> {
  // no migrations: doctor looks, it changes nothing in the database
  return openPostgresStore(url, {
    migrate: false,
    max: 1,
    connectTimeoutMs: STORAGE_CHECK_TIMEOUT_MS,
    statementTimeoutMs: STORAGE_CHECK_TIMEOUT_MS,
    applicationName: "acp doctor",
  });
}

/**
 * The `serve` check (config.yml's `serve:` and `storage:` sections), a warning for a password written in
 * `storage.url`, and the `storage` check: the database `acp serve` would use answers within
 * {@link STORAGE_CHECK_TIMEOUT_MS} (its URL from `ACP_STORAGE_URL`, else `storage.url`; SQLite without
 * either). Never prints a password. When it answers, the `clock` check (this machine's clock, `now`, against
 * the database's) and the `audit anchor` check (this home's node anchor for that database) follow.
 */
export async function checkServeStorage(
  home: string,
  env: Readonly<Record<string, string | undefined>>,
  now: () => Date = () => new Date(),
): Promise<HomeCheck[]> {
  const { checks, config } = readServeSections(home);
  const inFile = config?.storageUrl;
  if (inFile !== undefined && holdsPassword(inFile)) {
    checks.push({
      status: "warn",
      name: "storage.url",
      detail:
        `config.yml storage.url holds a password (${safeStorageUrl(inFile)}): whoever reads config.yml or a copy ` +
        `of it has it. Give the URL in ${STORAGE_URL_ENV} instead (the environment of acp serve, e.g. its ` +
        "systemd EnvironmentFile), or leave the password out of the URL and set PGPASSWORD",
    });
  }
  const resolved = resolveStorageUrl({ env: env[STORAGE_URL_ENV], config: inFile });
  if (resolved === null) {
    checks.push({ status: "ok", name: "storage", detail: `SQLite ${join(home, "state.db")} (no storage URL set)` });
    return checks;
  }
  const shadowed =
    resolved.source === STORAGE_URL_ENV && inFile !== undefined ? `; it wins over config.yml storage.url` : "";
  let store: PostgresStore;
  try {
    store = await reachable(resolved.url);
  } catch (err) {
    checks.push({ status: "fail", name: "storage", detail: explainStorageError(err, resolved) });
    return checks;
  }
  try {
    checks.push({
      status: "ok",
      name: "storage",
      detail: `PostgreSQL ${safeStorageUrl(resolved.url)} answers (from ${resolved.source}${shadowed})`,
    });
    checks.push(await checkClock(store, now));
    checks.push(await checkAuditAnchor(store, home, resolved.url));
  } finally {
    await store.close();
  }
  return checks;
}

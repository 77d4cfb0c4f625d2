/**
 * Test databases on the run's PostgreSQL (started by `global-setup.ts`): each test file gets its own
 * database, so files running in parallel never see each other's rows.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, inject } from "vitest";

/**
 * The URL of the run's PostgreSQL. Throws (the test FAILS, it is never skipped) when the server could not
 * be installed or started, with the reason.
 */
export function postgresTestUrl(): string {
  const given = inject("acpTestPostgres");
  if (given?.url != null) return given.url;
  throw new Error(
    `postgres tests need a running PostgreSQL and there is none: ${given?.error ?? "the vitest globalSetup did not run"}` +
      " (scripts/postgres.sh installs Debian's postgresql with apt-get; or set ACP_TEST_POSTGRES_URL)",
  );
}

/** A fresh, empty database on the test server. */
export interface TestDatabase {
  readonly url: string;
  /** Drops it (terminating whatever is still connected). */
  drop(): Promise<void>;
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: postgresTestUrl() });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Creates a database `acp_t_<random>` and returns its URL. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `acp_t_${randomBytes(6).toString("hex")}`;
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(postgresTestUrl());
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}

/** A test file's database: created before its tests, dropped after; `url` throws why it is missing. */
export interface UsedTestDatabase {
  readonly url: string;
}

/**
 * Registers hooks that create a database before the file's tests and drop it after. A failure to
 * create it is not thrown from the hook (that would only skip the tests): each test that reads `url`
 * FAILS with the reason instead.
 */
export function useTestDatabase(): UsedTestDatabase {
  let db: TestDatabase | undefined;
  let failure: unknown;
  beforeAll(async () => {
    try {
      db = await createTestDatabase();
    } catch (err) {
      failure = err;
    }
  });
  afterAll(async () => {
    await db?.drop();
  });
  return {
    get url(): string {
      if (db !== undefined) return db.url;
      throw failure instanceof Error ? failure : new Error("the test database is not created yet");
    },
  };
}

/**
 * The anchor file an `acp serve` node with `home` keeps for the database of `url` (named from the database
 * the connection reaches, as the node names it), read without moving anything.
 */
export async function anchorPathFor(home: string, url: string): Promise<string> {
  const { resolvePostgresAuditAnchorPath } = await import("@acp/store");
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await resolvePostgresAuditAnchorPath(home, url, (t, v) => client.query(t, v))).path;
  } finally {
    await client.end();
  }
}

/** The shared audit-log suite against the PostgreSQL chain. */
import { afterAll } from "vitest";
import {
  createPostgresAuditLog,
  openPostgresStore,
  readPostgresAuditLines,
  type PostgresStore,
} from "../../src/index.js";
import { describeAuditLog } from "../cases/audit-log.case.js";
import { useTestDatabase } from "./test-database.js";

const db = useTestDatabase();
let store: PostgresStore | undefined;
afterAll(async () => {
  await store?.close();
});

describeAuditLog("postgres", async (options) => {
  store ??= await openPostgresStore(db.url);
  const opened = store;
  await opened.query("TRUNCATE acp_audit_events");
  return {
    log: createPostgresAuditLog(opened, options),
    lines: async () => {
      const all: string[] = [];
      for await (const line of readPostgresAuditLines(opened)) all.push(line);
      return all;
    },
  };
});

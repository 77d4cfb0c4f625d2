import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createSqliteProposalLedger, listSqliteProposalSightings, openStateDb } from "../../src/index.js";
import { describeProposalLedger } from "../cases/proposal-ledger.case.js";

const dir = mkdtempSync(join(tmpdir(), "acp-proposal-ledger-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

describeProposalLedger("sqlite", (maxEntries) => {
  const path = join(dir, `state-${++n}.db`);
  const options = maxEntries !== undefined ? { maxEntries } : {};
  return Promise.resolve({
    ledger: createSqliteProposalLedger(openStateDb(path), options),
    // another process: its own connection to the same file
    reopen: () => createSqliteProposalLedger(openStateDb(path), options),
  });
});

describe("listSqliteProposalSightings", () => {
  it("lists from a database opened read-only, and none where no ledger was ever made", () => {
    const path = join(dir, "listed.db");
    const empty = openStateDb(path);
    expect(listSqliteProposalSightings(empty, 10)).toEqual([]);
    createSqliteProposalLedger(empty).firstSeen("sha256:a", new Date(0), { domain: "d", action: "a" });
    const reader = openStateDb(path, { readonly: true });
    expect(listSqliteProposalSightings(reader, 10)).toEqual([
      { key: "sha256:a", firstSeenMs: 0, domain: "d", action: "a" },
    ]);
  });
});

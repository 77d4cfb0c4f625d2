import type { StateDbMigration } from "@acp/store";
import { PURGE_INDEXES } from "./purge-sql.js";

/** The claim provider's tables in the state database (ids `claim/NNN-…`; never edited once shipped). */
export const CLAIM_MIGRATIONS: readonly StateDbMigration[] = [
  {
    id: "claim/001-sandboxes",
    up: `
CREATE TABLE claim_sandboxes (
  id          TEXT PRIMARY KEY,
  state       TEXT NOT NULL CHECK (state IN ('created','active','published','expired','deleted','claimed')),
  created_at  INTEGER NOT NULL,
  expires_at  INTEGER NOT NULL,
  extensions  INTEGER NOT NULL DEFAULT 0,
  metadata    TEXT NOT NULL DEFAULT '{}',
  published_at INTEGER,
  claimed_at  INTEGER,
  ended_at    INTEGER
) STRICT;
CREATE INDEX claim_sandboxes_due ON claim_sandboxes(state, expires_at);
CREATE TABLE claim_handles (
  hash       TEXT PRIMARY KEY,
  sandbox_id TEXT NOT NULL REFERENCES claim_sandboxes(id),
  sealed     TEXT NOT NULL,
  stage      TEXT NOT NULL CHECK (stage IN ('preview','published','workspace')),
  created_at INTEGER NOT NULL,
  retired_at INTEGER
) STRICT;
CREATE UNIQUE INDEX claim_handles_live ON claim_handles(sandbox_id) WHERE retired_at IS NULL;
CREATE TABLE claim_credentials (
  hash       TEXT PRIMARY KEY,
  sandbox_id TEXT NOT NULL REFERENCES claim_sandboxes(id),
  kind       TEXT NOT NULL CHECK (kind IN ('agent_token','claim_code','exchange_code','preview_session','owner_session')),
  surface    TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  used_at    INTEGER,
  revoked_at INTEGER
) STRICT;
CREATE INDEX claim_credentials_sandbox ON claim_credentials(sandbox_id, kind);
CREATE TABLE claim_faqs (
  id          TEXT PRIMARY KEY,
  sandbox_id  TEXT NOT NULL REFERENCES claim_sandboxes(id),
  slug        TEXT NOT NULL,
  body        TEXT NOT NULL,
  status      TEXT NOT NULL CHECK (status IN ('draft','published')),
  created_at  INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL,
  UNIQUE (sandbox_id, slug)
) STRICT;
CREATE TABLE claim_spent_challenges (
  hash       TEXT PRIMARY KEY,
  expires_at INTEGER NOT NULL
) STRICT;
`,
  },
  {
    id: "claim/002-reputation",
    up: `
ALTER TABLE claim_sandboxes ADD COLUMN source_key TEXT;
ALTER TABLE claim_sandboxes ADD COLUMN subject_key TEXT;
CREATE TABLE claim_reputation (
  key        TEXT PRIMARY KEY,
  score      REAL NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;
CREATE INDEX claim_reputation_updated ON claim_reputation(updated_at);
CREATE TABLE claim_admission_tokens (
  hash       TEXT PRIMARY KEY,
  uses       INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
) STRICT;
CREATE INDEX claim_admission_tokens_expiry ON claim_admission_tokens(expires_at);
`,
  },
  { id: "claim/003-purge-indexes", up: PURGE_INDEXES },
];

import type { PostgresStore } from "@acp/store";
import type { FaqBody } from "../content/faq.js";
import { newContentId, newPublicHandle, newSandboxId } from "../ids/random-ids.js";
import type { SecretBox } from "../secrets/keyed-hash.js";
import type {
  ChargeInput,
  ClaimInput,
  ClaimStore,
  CreateSandboxInput,
  CredentialKind,
  FaqRow,
  PublishResult,
  HandleStage,
  ReputationCharge,
  SandboxRow,
  SandboxState,
} from "./claim-store.js";
import { ENDED_RETENTION_MS } from "./claim-store.js";
import { POSTGRES_PURGE } from "./purge-sql.js";
import { chargeAll, pruneReputation, readScores, spendTokenUse, tokenUses } from "./postgres-reputation.js";

/** A connection inside `BEGIN … COMMIT` (the argument `PostgresStore.transaction` hands its callback). */
type Tx = Parameters<Parameters<PostgresStore["transaction"]>[0]>[0];

/** Thrown inside a transaction to roll it back with "nothing happened". */
class Abort extends Error {}

const SANDBOX_COLS = "s.id, s.state, s.created_at, s.expires_at, s.extensions";
const CHALLENGE_KEEP_MS = 10 * 60_000;

/**
 * The claim provider's state on PostgreSQL (`acp claim serve --storage-url postgres://…`), held to the same
 * contract tests as the SQLite store. Every transition runs in one transaction on one connection and is decided
 * by a conditional `UPDATE … WHERE state = … RETURNING` (READ COMMITTED re-checks the condition on the row it
 * locks, so of two racing requests exactly one sees its row move); FAQ creation locks the sandbox row first so
 * the per-sandbox limit holds under concurrency. Any failure rolls back and answers undefined/false.
 */
export class PostgresClaimStore implements ClaimStore {
  /** Wraps an open store whose database has `CLAIM_POSTGRES_MIGRATIONS` applied. */
  constructor(
    private readonly pg: PostgresStore,
    private readonly box: SecretBox,
  ) {}

  private async tx<T>(fn: (c: Tx) => Promise<T>): Promise<T | undefined> {
    try {
      return await this.pg.transaction(fn);
    } catch (err) {
      if (err instanceof Abort) return undefined;
      throw err;
    }
  }

  async sweep(now: number, abandoned?: ReputationCharge): Promise<number> {
    return (
      (await this.tx(async (c) => {
        const ended = await c.query<{ id: string }>(
          "UPDATE claim_sandboxes SET state = 'expired', ended_at = $1 WHERE state IN ('created','active','published') AND expires_at <= $1 RETURNING id",
          [now],
        );
        for (const { id } of ended.rows) {
          if (abandoned !== undefined) await chargeAll(c, { keys: [], sandboxId: id, charge: abandoned, now });
          await this.endSandbox(c, id, now);
        }
        await c.query(POSTGRES_PURGE.challenges, [now]);
        const cut = now - ENDED_RETENTION_MS;
        await c.query(POSTGRES_PURGE.credentials, [cut]);
        await c.query(POSTGRES_PURGE.metadata, [cut]);
        await pruneReputation(c, now, abandoned?.halfLifeMs);
        return ended.rows.length;
      })) ?? 0
    );
  }

  private async endSandbox(c: Tx, id: string, now: number): Promise<void> {
    await this.revokeAll(c, id, now);
    await c.query("UPDATE claim_handles SET retired_at = $1 WHERE sandbox_id = $2 AND retired_at IS NULL", [now, id]);
    await c.query("DELETE FROM claim_faqs WHERE sandbox_id = $1", [id]);
  }

  private async revokeAll(c: Tx, id: string, now: number): Promise<void> {
    await c.query("UPDATE claim_credentials SET revoked_at = $1 WHERE sandbox_id = $2 AND revoked_at IS NULL", [
      now,
      id,
    ]);
  }

  /** Spends a challenge (single use); false when it was already spent. */
  private async spend(c: Tx, challenge: string, expiresAt: number): Promise<boolean> {
    const r = await c.query(
      "INSERT INTO claim_spent_challenges (hash, expires_at) VALUES ($1, $2) ON CONFLICT (hash) DO NOTHING",
      [this.box.hash("challenge", challenge), expiresAt],
    );
    return r.rowCount === 1;
  }

  private async issueHandle(c: Tx, id: string, stage: HandleStage, now: number): Promise<string> {
    await c.query("UPDATE claim_handles SET retired_at = $1 WHERE sandbox_id = $2 AND retired_at IS NULL", [now, id]);
    const handle = newPublicHandle();
    await c.query(
      "INSERT INTO claim_handles (hash, sandbox_id, sealed, stage, created_at) VALUES ($1, $2, $3, $4, $5)",
      [this.box.hash("handle", handle), id, this.box.seal(handle), stage, now],
    );
    return handle;
  }

  private async insertCredential(
    c: Tx,
    hash: string,
    id: string,
    kind: CredentialKind,
    surface: string,
    now: number,
    expiresAt: number,
  ): Promise<void> {
    await c.query(
      "INSERT INTO claim_credentials (hash, sandbox_id, kind, surface, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)",
      [hash, id, kind, surface, now, expiresAt],
    );
  }

  private async sandboxIn(c: Tx, id: string, lock = ""): Promise<SandboxRow | undefined> {
    const r = await c.query<SandboxRow>(`SELECT ${SANDBOX_COLS} FROM claim_sandboxes s WHERE s.id = $1 ${lock}`, [id]);
    return r.rows[0];
  }

  /**
   * Locks the sandbox a credential belongs to (FOR UPDATE), before the credential row is touched: every
   * transaction here locks a sandbox row before its credentials, handles and FAQs, so no two can deadlock.
   */
  private async lockSandboxOf(c: Tx, hash: string, kind: CredentialKind): Promise<void> {
    await c.query(
      "SELECT s.id FROM claim_sandboxes s JOIN claim_credentials c ON c.sandbox_id = s.id WHERE c.hash = $1 AND c.kind = $2 FOR UPDATE OF s",
      [hash, kind],
    );
  }

  async liveHandle(id: string): Promise<string | undefined> {
    const r = await this.pg.query<{ sealed: string }>(
      "SELECT sealed FROM claim_handles WHERE sandbox_id = $1 AND retired_at IS NULL",
      [id],
    );
    const row = r.rows[0];
    return row === undefined ? undefined : this.box.open(row.sealed);
  }

  async createSandbox(
    input: CreateSandboxInput,
  ): Promise<{ id: string; handle: string; expiresAt: number; tokenExpiresAt: number } | undefined> {
    const { now } = input;
    return this.tx(async (c) => {
      if (!(await this.spend(c, input.challenge, now + CHALLENGE_KEEP_MS))) throw new Abort();
      if (input.tokenUse !== undefined && !(await spendTokenUse(c, input.tokenUse))) throw new Abort();
      const id = newSandboxId();
      const expiresAt = now + input.ttlMs;
      await c.query(
        "INSERT INTO claim_sandboxes (id, state, created_at, expires_at, metadata, source_key, subject_key) VALUES ($1, 'created', $2, $3, $4, $5, $6)",
        [id, now, expiresAt, input.metadata, input.sourceKey ?? null, input.subjectKey ?? null],
      );
      const handle = await this.issueHandle(c, id, "preview", now);
      const tokenExpiresAt = Math.min(expiresAt, now + input.tokenTtlMs);
      await this.insertCredential(c, input.tokenHash, id, "agent_token", "", now, tokenExpiresAt);
      const moved = await c.query("UPDATE claim_sandboxes SET state = 'active' WHERE id = $1 AND state = 'created'", [
        id,
      ]);
      if (moved.rowCount !== 1) throw new Abort();
      return { id, handle, expiresAt, tokenExpiresAt };
    });
  }

  async reputation(keys: readonly string[], halfLifeMs: number, now: number): Promise<number[]> {
    return readScores(this.pg, keys, halfLifeMs, now);
  }

  async chargeReputation(input: ChargeInput): Promise<void> {
    await this.tx((c) => chargeAll(c, input));
  }

  async resetReputation(keys: readonly string[]): Promise<number> {
    return (await this.pg.query("DELETE FROM claim_reputation WHERE key = ANY($1)", [keys])).rowCount ?? 0;
  }

  async spendProof(hash: string, expiresAt: number): Promise<boolean> {
    const r = await this.pg.query(
      "INSERT INTO claim_spent_challenges (hash, expires_at) VALUES ($1, $2) ON CONFLICT (hash) DO NOTHING",
      [hash, expiresAt],
    );
    return r.rowCount === 1;
  }

  async admissionTokenUses(hash: string): Promise<number> {
    return tokenUses(this.pg, hash);
  }

  async credentialSandbox(
    hash: string,
    kind: CredentialKind,
    surface: string,
    states: readonly SandboxState[],
    now: number,
  ): Promise<SandboxRow | undefined> {
    const r = await this.pg.query<SandboxRow>(
      `SELECT ${SANDBOX_COLS} FROM claim_credentials c JOIN claim_sandboxes s ON s.id = c.sandbox_id
       WHERE c.hash = $1 AND c.kind = $2 AND c.surface = $3 AND c.revoked_at IS NULL AND c.used_at IS NULL
         AND c.expires_at > $4 AND (s.state = 'claimed' OR s.expires_at > $4)`,
      [hash, kind, surface, now],
    );
    const row = r.rows[0];
    return row !== undefined && states.includes(row.state) ? row : undefined;
  }

  async issueCode(
    id: string,
    kind: "claim_code" | "exchange_code",
    surface: string,
    hash: string,
    ttlMs: number,
    states: readonly SandboxState[],
    now: number,
  ): Promise<boolean> {
    return (
      (await this.tx(async (c) => {
        const s = await this.sandboxIn(c, id, "FOR SHARE");
        if (s === undefined || !states.includes(s.state) || s.expires_at <= now) throw new Abort();
        await this.insertCredential(c, hash, id, kind, surface, now, Math.min(now + ttlMs, s.expires_at));
        return true;
      })) ?? false
    );
  }

  async consumeExchange(
    codeHash: string,
    surface: string,
    sessionHash: string,
    sessionTtlMs: number,
    now: number,
  ): Promise<string | undefined> {
    return this.tx(async (c) => {
      await this.lockSandboxOf(c, codeHash, "exchange_code");
      const used = await c.query<{ sandbox_id: string }>(
        "UPDATE claim_credentials SET used_at = $1 WHERE hash = $2 AND kind = 'exchange_code' AND surface = $3 AND used_at IS NULL AND revoked_at IS NULL AND expires_at > $1 RETURNING sandbox_id",
        [now, codeHash, surface],
      );
      const sandboxId = used.rows[0]?.sandbox_id;
      if (sandboxId === undefined) throw new Abort();
      const s = await this.sandboxIn(c, sandboxId, "FOR SHARE");
      if (s === undefined || !["active", "published"].includes(s.state) || s.expires_at <= now) throw new Abort();
      const until = Math.min(now + sessionTtlMs, s.expires_at);
      await this.insertCredential(c, sessionHash, s.id, "preview_session", surface, now, until);
      return s.id;
    });
  }

  async claim(input: ClaimInput): Promise<{ id: string; handle: string } | undefined> {
    const { now } = input;
    return this.tx(async (c) => {
      if (!(await this.spend(c, input.challenge, now + CHALLENGE_KEEP_MS))) throw new Abort();
      await this.lockSandboxOf(c, input.codeHash, "claim_code");
      const code = await c.query<{ sandbox_id: string }>(
        "UPDATE claim_credentials SET used_at = $1 WHERE hash = $2 AND kind = 'claim_code' AND used_at IS NULL AND revoked_at IS NULL AND expires_at > $1 RETURNING sandbox_id",
        [now, input.codeHash],
      );
      const sandboxId = code.rows[0]?.sandbox_id;
      if (sandboxId === undefined) throw new Abort();
      const moved = await c.query<{ id: string }>(
        "UPDATE claim_sandboxes SET state = 'claimed', claimed_at = $1 WHERE id = $2 AND state = 'published' AND expires_at > $1 RETURNING id",
        [now, sandboxId],
      );
      const id = moved.rows[0]?.id;
      if (id === undefined) throw new Abort();
      await this.revokeAll(c, id, now);
      const handle = await this.issueHandle(c, id, "workspace", now);
      await this.insertCredential(c, input.ownerSessionHash, id, "owner_session", "admin", now, now + input.ownerTtlMs);
      return { id, handle };
    });
  }

  async sandbox(id: string): Promise<SandboxRow | undefined> {
    const r = await this.pg.query<SandboxRow>(`SELECT ${SANDBOX_COLS} FROM claim_sandboxes s WHERE s.id = $1`, [id]);
    return r.rows[0];
  }

  async sandboxByHandle(handle: string, now: number): Promise<SandboxRow | undefined> {
    const r = await this.pg.query<SandboxRow>(
      `SELECT ${SANDBOX_COLS} FROM claim_handles h JOIN claim_sandboxes s ON s.id = h.sandbox_id
       WHERE h.hash = $1 AND h.retired_at IS NULL AND (s.state = 'claimed' OR (s.state = 'published' AND s.expires_at > $2))`,
      [this.box.hash("handle", handle), now],
    );
    return r.rows[0];
  }

  async deleteSandbox(id: string, now: number): Promise<boolean> {
    return (
      (await this.tx(async (c) => {
        const moved = await c.query(
          "UPDATE claim_sandboxes SET state = 'deleted', ended_at = $1 WHERE id = $2 AND state IN ('active','published') AND expires_at > $1",
          [now, id],
        );
        if (moved.rowCount !== 1) throw new Abort();
        await this.endSandbox(c, id, now);
        return true;
      })) ?? false
    );
  }

  async extend(
    id: string,
    byMs: number,
    max: number,
    now: number,
  ): Promise<{ expiresAt: number; extensions: number } | undefined> {
    const r = await this.pg.query<{ expiresAt: number; extensions: number }>(
      `UPDATE claim_sandboxes SET expires_at = expires_at + $1, extensions = extensions + 1
       WHERE id = $2 AND state IN ('active','published') AND expires_at > $3 AND extensions < $4
       RETURNING expires_at AS "expiresAt", extensions`,
      [byMs, id, now, max],
    );
    return r.rows[0];
  }

  async createFaq(
    sandboxId: string,
    body: FaqBody,
    max: number,
    now: number,
  ): Promise<FaqRow | "limit" | "slug_taken"> {
    const r = await this.tx(async (c): Promise<FaqRow | "limit" | "slug_taken"> => {
      // The sandbox row lock serialises concurrent creations, so the count below stays true until commit.
      if ((await this.sandboxIn(c, sandboxId, "FOR UPDATE")) === undefined) return "limit";
      const n = await c.query<{ n: number }>("SELECT count(*)::int AS n FROM claim_faqs WHERE sandbox_id = $1", [
        sandboxId,
      ]);
      if ((n.rows[0]?.n ?? 0) >= max) return "limit";
      const dup = await c.query("SELECT 1 FROM claim_faqs WHERE sandbox_id = $1 AND slug = $2", [sandboxId, body.slug]);
      if ((dup.rowCount ?? 0) > 0) return "slug_taken";
      const id = newContentId("faq");
      await c.query(
        "INSERT INTO claim_faqs (id, sandbox_id, slug, body, status, created_at, updated_at) VALUES ($1, $2, $3, $4, 'draft', $5, $5)",
        [id, sandboxId, body.slug, JSON.stringify(body), now],
      );
      return { id, sandbox_id: sandboxId, status: "draft", body, updated_at: now };
    });
    return r ?? "limit";
  }

  async listFaqs(sandboxId: string, onlyPublished = false): Promise<FaqRow[]> {
    const r = await this.pg.query<{
      id: string;
      sandbox_id: string;
      status: "draft" | "published";
      body: string;
      updated_at: number;
    }>(
      `SELECT id, sandbox_id, status, body, updated_at FROM claim_faqs WHERE sandbox_id = $1 ${onlyPublished ? "AND status = 'published'" : ""} ORDER BY created_at, seq`,
      [sandboxId],
    );
    return r.rows.map((row) => ({ ...row, body: JSON.parse(row.body) as FaqBody }));
  }

  async getFaq(sandboxId: string, faqId: string): Promise<FaqRow | undefined> {
    return (await this.listFaqs(sandboxId)).find((f) => f.id === faqId);
  }

  async updateFaq(sandboxId: string, faqId: string, body: FaqBody, now: number, draftOnly = false): Promise<boolean> {
    try {
      // With `draftOnly` the status is re-checked on the row this statement writes (after any publishing
      // transaction holding it commits), so an unscanned body never lands on a published FAQ.
      const r = await this.pg.query(
        `UPDATE claim_faqs SET body = $1, slug = $2, updated_at = $3 WHERE id = $4 AND sandbox_id = $5${draftOnly ? " AND status = 'draft'" : ""}`,
        [JSON.stringify(body), body.slug, now, faqId, sandboxId],
      );
      return r.rowCount === 1;
    } catch (err) {
      if ((err as { code?: string }).code === "23505") return false; // unique_violation: the slug is taken
      throw err;
    }
  }

  async deleteFaq(sandboxId: string, faqId: string): Promise<boolean> {
    const r = await this.pg.query("DELETE FROM claim_faqs WHERE id = $1 AND sandbox_id = $2", [faqId, sandboxId]);
    return r.rowCount === 1;
  }

  async publishFaq(sandboxId: string, faqId: string, now: number, scanned: FaqBody): Promise<PublishResult> {
    return this.tx(async (c): Promise<PublishResult> => {
      if ((await this.sandboxIn(c, sandboxId, "FOR UPDATE")) === undefined) throw new Abort();
      // The row locked, its body compared, then published: an edit either commits before (and is seen here, so
      // nothing is published) or waits for this transaction (and then finds the FAQ published).
      const stored = await c.query<{ body: string }>(
        "SELECT body FROM claim_faqs WHERE id = $1 AND sandbox_id = $2 FOR UPDATE",
        [faqId, sandboxId],
      );
      if (stored.rows[0] === undefined) throw new Abort();
      if (stored.rows[0].body !== JSON.stringify(scanned)) return "changed";
      await c.query("UPDATE claim_faqs SET status = 'published', updated_at = $1 WHERE id = $2 AND sandbox_id = $3", [
        now,
        faqId,
        sandboxId,
      ]);
      const moved = await c.query(
        "UPDATE claim_sandboxes SET state = 'published', published_at = $1 WHERE id = $2 AND state = 'active' AND expires_at > $1",
        [now, sandboxId],
      );
      const live = await c.query<{ sealed: string }>(
        "SELECT sealed FROM claim_handles WHERE sandbox_id = $1 AND retired_at IS NULL",
        [sandboxId],
      );
      const current = live.rows[0] === undefined ? undefined : this.box.open(live.rows[0].sealed);
      if (moved.rowCount === 1)
        return { handle: await this.issueHandle(c, sandboxId, "published", now), previous: current, rotated: true };
      const s = await this.sandboxIn(c, sandboxId);
      if (s === undefined || s.state !== "published" || s.expires_at <= now || current === undefined) throw new Abort();
      return { handle: current, previous: undefined, rotated: false };
    });
  }
}

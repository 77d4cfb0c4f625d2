/* eslint-disable @typescript-eslint/require-await -- synchronous better-sqlite3 behind the async ClaimStore interface */
import type { Database } from "better-sqlite3";
import { newPublicHandle, newSandboxId } from "../ids/random-ids.js";
import type { SecretBox } from "../secrets/keyed-hash.js";
import type { FaqBody } from "../content/faq.js";
import type {
  ChargeInput,
  ClaimStore,
  CreateSandboxInput,
  CredentialKind,
  FaqRow,
  PublishResult,
  ReputationCharge,
  SandboxRow,
  SandboxState,
} from "./claim-store.js";
import { ENDED_RETENTION_MS } from "./claim-store.js";
import { SQLITE_PURGE } from "./purge-sql.js";
import { deleteFaqRow, insertFaq, listFaqRows, updateFaqRow } from "./sqlite-faqs.js";
import { chargeAll, pruneReputation, readScores, spendTokenUse } from "./sqlite-reputation.js";

/** Thrown inside a transaction to roll it back with "nothing happened". */
class Abort extends Error {}

/**
 * The claim provider's state in SQLite. Every transition is a single conditional `UPDATE … WHERE state …
 * RETURNING` inside an immediate transaction, so two racing requests can never both win; secrets (tokens,
 * codes, handles) are looked up by their keyed hash only. The methods are synchronous inside (better-sqlite3)
 * and return promises to match {@link ClaimStore}.
 */
export class SqliteClaimStore implements ClaimStore {
  /** Wraps an open state database that has {@link CLAIM_MIGRATIONS} applied. */
  constructor(
    private readonly db: Database,
    private readonly box: SecretBox,
  ) {}

  private tx<T>(fn: () => T): T | undefined {
    try {
      return this.db.transaction(fn).immediate();
    } catch (err) {
      if (err instanceof Abort) return undefined;
      throw err;
    }
  }

  /** Marks sandboxes past their TTL expired and drops their content and credentials (clean abandonment). */
  async sweep(now: number, abandoned?: ReputationCharge): Promise<number> {
    return (
      this.tx(() => {
        const ended = this.db
          .prepare<[number, number], { id: string }>(
            "UPDATE claim_sandboxes SET state = 'expired', ended_at = ? WHERE state IN ('created','active','published') AND expires_at <= ? RETURNING id",
          )
          .all(now, now);
        for (const { id } of ended) {
          if (abandoned !== undefined) chargeAll(this.db, { keys: [], sandboxId: id, charge: abandoned, now });
          this.endSandbox(id, now);
        }
        this.db.prepare(SQLITE_PURGE.challenges).run(now);
        const cut = now - ENDED_RETENTION_MS;
        this.db.prepare(SQLITE_PURGE.credentials).run(cut, cut);
        this.db.prepare(SQLITE_PURGE.metadata).run(cut);
        pruneReputation(this.db, now, abandoned?.halfLifeMs);
        return ended.length;
      }) ?? 0
    );
  }

  private endSandbox(id: string, now: number): void {
    this.revokeAll(id, now);
    this.db.prepare("UPDATE claim_handles SET retired_at = ? WHERE sandbox_id = ? AND retired_at IS NULL").run(now, id);
    this.db.prepare("DELETE FROM claim_faqs WHERE sandbox_id = ?").run(id);
  }

  private revokeAll(id: string, now: number): void {
    this.db
      .prepare("UPDATE claim_credentials SET revoked_at = ? WHERE sandbox_id = ? AND revoked_at IS NULL")
      .run(now, id);
  }

  /** Spends a challenge (single use); false when it was already spent. Call inside a transaction. */
  private spend(challenge: string, expiresAt: number): boolean {
    return this.spendHash(this.box.hash("challenge", challenge), expiresAt);
  }

  /** Records a single-use value's hash until `expiresAt`; false when it was recorded before. */
  private spendHash(hash: string, expiresAt: number): boolean {
    return (
      this.db
        .prepare("INSERT OR IGNORE INTO claim_spent_challenges (hash, expires_at) VALUES (?, ?)")
        .run(hash, expiresAt).changes === 1
    );
  }

  private issueHandle(id: string, stage: "preview" | "published" | "workspace", now: number): string {
    const retired = this.db
      .prepare<[number, string], { sealed: string }>(
        "UPDATE claim_handles SET retired_at = ? WHERE sandbox_id = ? AND retired_at IS NULL RETURNING sealed",
      )
      .get(now, id);
    void retired;
    const handle = newPublicHandle();
    this.db
      .prepare("INSERT INTO claim_handles (hash, sandbox_id, sealed, stage, created_at) VALUES (?, ?, ?, ?, ?)")
      .run(this.box.hash("handle", handle), id, this.box.seal(handle), stage, now);
    return handle;
  }

  /** The live handle of a sandbox, in clear (for its agent or owner), or undefined. */
  private liveHandleSync(id: string): string | undefined {
    const row = this.db
      .prepare<[string], { sealed: string }>(
        "SELECT sealed FROM claim_handles WHERE sandbox_id = ? AND retired_at IS NULL",
      )
      .get(id);
    return row === undefined ? undefined : this.box.open(row.sealed);
  }

  /**
   * Creates a sandbox admitted by `challenge` (spent here, atomically): `created` → `active`, a preview
   * handle and an agent token. Undefined when the challenge was already spent.
   */
  async createSandbox(
    input: CreateSandboxInput,
  ): Promise<{ id: string; handle: string; expiresAt: number; tokenExpiresAt: number } | undefined> {
    const { now } = input;
    return this.tx(() => {
      if (!this.spend(input.challenge, now + 10 * 60_000)) throw new Abort();
      if (input.tokenUse !== undefined && !spendTokenUse(this.db, input.tokenUse)) throw new Abort();
      const id = newSandboxId();
      const expiresAt = now + input.ttlMs;
      this.db
        .prepare(
          "INSERT INTO claim_sandboxes (id, state, created_at, expires_at, metadata, source_key, subject_key) VALUES (?, 'created', ?, ?, ?, ?, ?)",
        )
        .run(id, now, expiresAt, input.metadata, input.sourceKey ?? null, input.subjectKey ?? null);
      const handle = this.issueHandle(id, "preview", now);
      const tokenExpiresAt = Math.min(expiresAt, now + input.tokenTtlMs);
      this.insertCredential(input.tokenHash, id, "agent_token", "", now, tokenExpiresAt);
      const moved = this.db
        .prepare("UPDATE claim_sandboxes SET state = 'active' WHERE id = ? AND state = 'created'")
        .run(id);
      if (moved.changes !== 1) throw new Abort();
      return { id, handle, expiresAt, tokenExpiresAt };
    });
  }

  private insertCredential(
    hash: string,
    id: string,
    kind: CredentialKind,
    surface: string,
    now: number,
    expiresAt: number,
  ): void {
    this.db
      .prepare(
        "INSERT INTO claim_credentials (hash, sandbox_id, kind, surface, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)",
      )
      .run(hash, id, kind, surface, now, expiresAt);
  }

  /**
   * The sandbox a live credential belongs to: not revoked, not used, not expired, and its sandbox in one of
   * `states` and (unless claimed) within its TTL. Undefined otherwise, whatever the reason.
   */
  async credentialSandbox(
    hash: string,
    kind: CredentialKind,
    surface: string,
    states: readonly SandboxState[],
    now: number,
  ): Promise<SandboxRow | undefined> {
    const row = this.db
      .prepare<[string, string, string, number, number], SandboxRow & { st: string }>(
        `SELECT s.id, s.state, s.created_at, s.expires_at, s.extensions, s.state AS st FROM claim_credentials c JOIN claim_sandboxes s ON s.id = c.sandbox_id
         WHERE c.hash = ? AND c.kind = ? AND c.surface = ? AND c.revoked_at IS NULL AND c.used_at IS NULL AND c.expires_at > ?
           AND (s.state = 'claimed' OR s.expires_at > ?)`,
      )
      .get(hash, kind, surface, now, now);
    return row !== undefined && states.includes(row.state) ? row : undefined;
  }

  /** Issues a claim or exchange code for a sandbox in one of `states`; false when it is not in one. */
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
      this.tx(() => {
        const s = this.sandboxSync(id);
        if (s === undefined || !states.includes(s.state) || s.expires_at <= now) throw new Abort();
        this.insertCredential(hash, id, kind, surface, now, Math.min(now + ttlMs, s.expires_at));
        return true;
      }) ?? false
    );
  }

  /**
   * Consumes an exchange code for `surface` (single use, atomically) and opens a session on that surface.
   * Undefined for an unknown, used, expired, revoked or foreign-surface code alike.
   */
  async consumeExchange(
    codeHash: string,
    surface: string,
    sessionHash: string,
    sessionTtlMs: number,
    now: number,
  ): Promise<string | undefined> {
    return this.tx(() => {
      const used = this.db
        .prepare<[number, string, string, number], { sandbox_id: string }>(
          "UPDATE claim_credentials SET used_at = ? WHERE hash = ? AND kind = 'exchange_code' AND surface = ? AND used_at IS NULL AND revoked_at IS NULL AND expires_at > ? RETURNING sandbox_id",
        )
        .get(now, codeHash, surface, now);
      if (used === undefined) throw new Abort();
      const s = this.sandboxSync(used.sandbox_id);
      if (s === undefined || !["active", "published"].includes(s.state) || s.expires_at <= now) throw new Abort();
      this.insertCredential(
        sessionHash,
        s.id,
        "preview_session",
        surface,
        now,
        Math.min(now + sessionTtlMs, s.expires_at),
      );
      return s.id;
    });
  }

  /**
   * The claim (§19): in ONE immediate transaction — spend the claim challenge, consume the claim code
   * (unused, unexpired, unrevoked), move the sandbox `published` → `claimed` only if it is still published and
   * within its TTL, rotate the handle, revoke every agent token, preview session and outstanding code, and
   * open the owner session. Any failure rolls everything back and returns undefined.
   */
  async claim(input: {
    codeHash: string;
    challenge: string;
    ownerSessionHash: string;
    ownerTtlMs: number;
    now: number;
  }): Promise<{ id: string; handle: string } | undefined> {
    const { now } = input;
    return this.tx(() => {
      if (!this.spend(input.challenge, now + 10 * 60_000)) throw new Abort();
      const code = this.db
        .prepare<[number, string, number], { sandbox_id: string }>(
          "UPDATE claim_credentials SET used_at = ? WHERE hash = ? AND kind = 'claim_code' AND used_at IS NULL AND revoked_at IS NULL AND expires_at > ? RETURNING sandbox_id",
        )
        .get(now, input.codeHash, now);
      if (code === undefined) throw new Abort();
      const moved = this.db
        .prepare<[number, string, number], { id: string }>(
          "UPDATE claim_sandboxes SET state = 'claimed', claimed_at = ? WHERE id = ? AND state = 'published' AND expires_at > ? RETURNING id",
        )
        .get(now, code.sandbox_id, now);
      if (moved === undefined) throw new Abort();
      this.revokeAll(moved.id, now);
      const handle = this.issueHandle(moved.id, "workspace", now);
      this.insertCredential(input.ownerSessionHash, moved.id, "owner_session", "admin", now, now + input.ownerTtlMs);
      return { id: moved.id, handle };
    });
  }

  /** A sandbox by internal id. */
  private sandboxSync(id: string): SandboxRow | undefined {
    return this.db
      .prepare<[string], SandboxRow>(
        "SELECT id, state, created_at, expires_at, extensions FROM claim_sandboxes WHERE id = ?",
      )
      .get(id);
  }

  /** The sandbox served under a live handle on the published origin (published within TTL, or claimed). */
  async sandboxByHandle(handle: string, now: number): Promise<SandboxRow | undefined> {
    return this.db
      .prepare<[string, number], SandboxRow>(
        `SELECT s.id, s.state, s.created_at, s.expires_at, s.extensions FROM claim_handles h JOIN claim_sandboxes s ON s.id = h.sandbox_id
         WHERE h.hash = ? AND h.retired_at IS NULL AND (s.state = 'claimed' OR (s.state = 'published' AND s.expires_at > ?))`,
      )
      .get(this.box.hash("handle", handle), now);
  }

  /** Deletes a live sandbox (`active`/`published` → `deleted`); false when it was not live. */
  async deleteSandbox(id: string, now: number): Promise<boolean> {
    return (
      this.tx(() => {
        const moved = this.db
          .prepare(
            "UPDATE claim_sandboxes SET state = 'deleted', ended_at = ? WHERE id = ? AND state IN ('active','published') AND expires_at > ?",
          )
          .run(now, id, now);
        if (moved.changes !== 1) throw new Abort();
        this.endSandbox(id, now);
        return true;
      }) ?? false
    );
  }

  /** Extends a live sandbox by `byMs` if it has fewer than `max` extensions; the new expiry or undefined. */
  async extend(
    id: string,
    byMs: number,
    max: number,
    now: number,
  ): Promise<{ expiresAt: number; extensions: number } | undefined> {
    return this.db
      .prepare<[number, string, number, number], { expiresAt: number; extensions: number }>(
        "UPDATE claim_sandboxes SET expires_at = expires_at + ?, extensions = extensions + 1 WHERE id = ? AND state IN ('active','published') AND expires_at > ? AND extensions < ? RETURNING expires_at AS expiresAt, extensions",
      )
      .get(byMs, id, now, max);
  }

  /** Inserts an FAQ; `limit` when the sandbox already has `max` FAQs, `slug_taken` for a duplicate slug. */
  async createFaq(
    sandboxId: string,
    body: FaqBody,
    max: number,
    now: number,
  ): Promise<FaqRow | "limit" | "slug_taken"> {
    return this.tx(() => insertFaq(this.db, sandboxId, body, max, now)) ?? "limit";
  }

  private listFaqsSync(sandboxId: string, onlyPublished = false): FaqRow[] {
    return listFaqRows(this.db, sandboxId, onlyPublished);
  }

  async getFaq(sandboxId: string, faqId: string): Promise<FaqRow | undefined> {
    return this.listFaqsSync(sandboxId).find((f) => f.id === faqId);
  }

  async updateFaq(sandboxId: string, faqId: string, body: FaqBody, now: number, draftOnly = false): Promise<boolean> {
    return updateFaqRow(this.db, sandboxId, faqId, body, now, draftOnly);
  }

  async deleteFaq(sandboxId: string, faqId: string): Promise<boolean> {
    return deleteFaqRow(this.db, sandboxId, faqId);
  }

  /**
   * Publishes an FAQ. The first publish moves the sandbox `active` → `published` and rotates the handle
   * (the preview handle is retired forever); later publishes keep the published handle.
   */
  async publishFaq(sandboxId: string, faqId: string, now: number, scanned: FaqBody): Promise<PublishResult> {
    return this.tx((): PublishResult => {
      // The body compared and the status set in one immediate transaction: what goes live is what was scanned.
      const stored = this.db
        .prepare<[string, string], { body: string }>("SELECT body FROM claim_faqs WHERE id = ? AND sandbox_id = ?")
        .get(faqId, sandboxId);
      if (stored === undefined) throw new Abort();
      if (stored.body !== JSON.stringify(scanned)) return "changed";
      this.db
        .prepare("UPDATE claim_faqs SET status = 'published', updated_at = ? WHERE id = ? AND sandbox_id = ?")
        .run(now, faqId, sandboxId);
      const moved = this.db
        .prepare(
          "UPDATE claim_sandboxes SET state = 'published', published_at = ? WHERE id = ? AND state = 'active' AND expires_at > ?",
        )
        .run(now, sandboxId, now);
      const current = this.liveHandleSync(sandboxId);
      if (moved.changes === 1)
        return { handle: this.issueHandle(sandboxId, "published", now), previous: current, rotated: true };
      const s = this.sandboxSync(sandboxId);
      if (s === undefined || s.state !== "published" || s.expires_at <= now || current === undefined) throw new Abort();
      return { handle: current, previous: undefined, rotated: false };
    });
  }
  async reputation(keys: readonly string[], halfLifeMs: number, now: number): Promise<number[]> {
    return readScores(this.db, keys, halfLifeMs, now);
  }

  async chargeReputation(input: ChargeInput): Promise<void> {
    this.tx(() => chargeAll(this.db, input));
  }

  async resetReputation(keys: readonly string[]): Promise<number> {
    const del = this.db.prepare("DELETE FROM claim_reputation WHERE key = ?");
    return this.tx(() => keys.reduce((n, k) => n + del.run(k).changes, 0)) ?? 0;
  }

  async spendProof(hash: string, expiresAt: number): Promise<boolean> {
    return this.spendHash(hash, expiresAt);
  }

  async admissionTokenUses(hash: string): Promise<number> {
    return (
      this.db.prepare<[string], { uses: number }>("SELECT uses FROM claim_admission_tokens WHERE hash = ?").get(hash)
        ?.uses ?? 0
    );
  }

  /** The live handle of a sandbox, in clear (for its agent or owner), or undefined. */
  async liveHandle(id: string): Promise<string | undefined> {
    return this.liveHandleSync(id);
  }

  /** A sandbox by internal id. */
  async sandbox(id: string): Promise<SandboxRow | undefined> {
    return this.sandboxSync(id);
  }

  /** The FAQs of a sandbox (optionally only published ones), oldest first. */
  async listFaqs(sandboxId: string, onlyPublished = false): Promise<FaqRow[]> {
    return this.listFaqsSync(sandboxId, onlyPublished);
  }
}

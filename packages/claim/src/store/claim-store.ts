import type { FaqBody } from "../content/faq.js";

/** Sandbox states (§5). */
export type SandboxState = "created" | "active" | "published" | "expired" | "deleted" | "claimed";

/** A sandbox row as the provider sees it (never sent as-is to unauthenticated callers). */
export interface SandboxRow {
  readonly id: string;
  readonly state: SandboxState;
  readonly created_at: number;
  readonly expires_at: number;
  readonly extensions: number;
}

/** A stored FAQ. */
export interface FaqRow {
  readonly id: string;
  readonly sandbox_id: string;
  readonly status: "draft" | "published";
  readonly body: FaqBody;
  readonly updated_at: number;
}

/** Credential kinds; every one is stored only as a keyed hash. */
export type CredentialKind = "agent_token" | "claim_code" | "exchange_code" | "preview_session" | "owner_session";

/** A sandbox's public handle after creation (preview), publish (published) or claim (workspace). */
export type HandleStage = "preview" | "published" | "workspace";

/** Input of {@link ClaimStore.createSandbox}. */
export interface CreateSandboxInput {
  readonly challenge: string;
  readonly tokenHash: string;
  readonly ttlMs: number;
  readonly tokenTtlMs: number;
  readonly metadata: string;
  readonly now: number;
  /** Reputation keys of the creating address range and issuer subject, kept to charge them later (§11.2). */
  readonly sourceKey?: string;
  readonly subjectKey?: string;
  /** An admission-token use, spent in the same transaction: creation fails when the token has no use left. */
  readonly tokenUse?: { readonly hash: string; readonly maxUses: number; readonly expiresAt: number };
}

/** Reputation points to add, and the half-life the stored score decays with. */
export interface ReputationCharge {
  readonly points: number;
  readonly halfLifeMs: number;
}

/** Input of {@link ClaimStore.chargeReputation}. */
export interface ChargeInput {
  /** Keys to charge (deduplicated with the sandbox's). */
  readonly keys: readonly string[];
  /** Also charge the source and subject that created this sandbox. */
  readonly sandboxId?: string;
  readonly charge: ReputationCharge;
  readonly now: number;
}

/**
 * What {@link ClaimStore.publishFaq} did: the live handle; `changed` when the stored body is no longer the one
 * scanned (nothing published); undefined when the FAQ or a live sandbox is missing.
 */
export type PublishResult = { handle: string; previous: string | undefined; rotated: boolean } | "changed" | undefined;

/** Input of {@link ClaimStore.claim}. */
export interface ClaimInput {
  readonly codeHash: string;
  readonly challenge: string;
  readonly ownerSessionHash: string;
  readonly ownerTtlMs: number;
  readonly now: number;
}

/**
 * The claim provider's state: one interface, two implementations (`SqliteClaimStore` by default,
 * `PostgresClaimStore` for `--storage-url postgres://…`), both held to the same contract tests. Every state
 * transition is atomic in the backing store (a single transaction whose conditional `UPDATE … WHERE state = …`
 * decides, so two racing requests can never both win); a transition that does not apply changes nothing and
 * answers `undefined`/`false`, whatever the reason. Secrets are looked up by their keyed hash only.
 */
/** How long a credential past its expiry or revocation, and an ended sandbox's metadata, are kept: one day. */
export const ENDED_RETENTION_MS = 24 * 60 * 60 * 1000;

export interface ClaimStore {
  /**
   * Marks sandboxes past their TTL expired and drops their content and credentials; how many ended. Rows
   * that can no longer count for anything go a day ({@link ENDED_RETENTION_MS}) after they ended: expired or
   * revoked credentials, and the metadata of expired and deleted sandboxes (the sandbox row and its retired
   * handles stay, so an identifier or handle is never given out again). With
   * `abandoned`, each sandbox ended this way (never claimed) charges its creating source and subject, in the same
   * transaction (so of several nodes sweeping, the one that ends a sandbox charges it, once).
   */
  sweep(now: number, abandoned?: ReputationCharge): Promise<number>;
  /**
   * Spends a single-use proof id (`hash`: the box's keyed hash of it), remembered until `expiresAt` (then the
   * sweep drops it); false when it was spent before, by this node or any other on the same store.
   */
  spendProof(hash: string, expiresAt: number): Promise<boolean>;
  /** The decayed reputation scores of `keys` at `now` (0 for an unknown key), in order. */
  reputation(keys: readonly string[], halfLifeMs: number, now: number): Promise<number[]>;
  /** Adds points to reputation keys (each score decayed to `now` first), atomically per key. */
  chargeReputation(input: ChargeInput): Promise<void>;
  /** Forgets the scores of `keys` (an operator clearing a false positive); how many existed. */
  resetReputation(keys: readonly string[]): Promise<number>;
  /** How many sandboxes an admission token (by keyed hash) has admitted so far. */
  admissionTokenUses(hash: string): Promise<number>;
  /** The live handle of a sandbox, in clear (for its agent or owner), or undefined. */
  liveHandle(id: string): Promise<string | undefined>;
  /** Spends `challenge` and creates a sandbox (`created` → `active`), its preview handle and agent token. */
  createSandbox(
    input: CreateSandboxInput,
  ): Promise<{ id: string; handle: string; expiresAt: number; tokenExpiresAt: number } | undefined>;
  /** The sandbox a live credential of `kind` on `surface` belongs to, if that sandbox is in one of `states`. */
  credentialSandbox(
    hash: string,
    kind: CredentialKind,
    surface: string,
    states: readonly SandboxState[],
    now: number,
  ): Promise<SandboxRow | undefined>;
  /** Issues a claim or exchange code for a live sandbox in one of `states`; false when it is not in one. */
  issueCode(
    id: string,
    kind: "claim_code" | "exchange_code",
    surface: string,
    hash: string,
    ttlMs: number,
    states: readonly SandboxState[],
    now: number,
  ): Promise<boolean>;
  /** Consumes an exchange code (single use) and opens a preview session; the sandbox id or undefined. */
  consumeExchange(
    codeHash: string,
    surface: string,
    sessionHash: string,
    sessionTtlMs: number,
    now: number,
  ): Promise<string | undefined>;
  /**
   * The claim (§19): spend the challenge, consume the code, `published` → `claimed` (still published, within
   * TTL), rotate the handle, revoke every other credential, open the owner session — all or nothing.
   */
  claim(input: ClaimInput): Promise<{ id: string; handle: string } | undefined>;
  /** A sandbox by internal id. */
  sandbox(id: string): Promise<SandboxRow | undefined>;
  /** The sandbox served under a live handle on the published origin (published within TTL, or claimed). */
  sandboxByHandle(handle: string, now: number): Promise<SandboxRow | undefined>;
  /** `active`/`published` → `deleted`; false when it was not live. */
  deleteSandbox(id: string, now: number): Promise<boolean>;
  /** Extends a live sandbox by `byMs` if it has fewer than `max` extensions; the new expiry or undefined. */
  extend(
    id: string,
    byMs: number,
    max: number,
    now: number,
  ): Promise<{ expiresAt: number; extensions: number } | undefined>;
  /** Inserts a draft FAQ; `limit` when the sandbox has `max` already, `slug_taken` for a duplicate slug. */
  createFaq(sandboxId: string, body: FaqBody, max: number, now: number): Promise<FaqRow | "limit" | "slug_taken">;
  /** The FAQs of a sandbox (optionally only published ones), oldest first. */
  listFaqs(sandboxId: string, onlyPublished?: boolean): Promise<FaqRow[]>;
  /** One FAQ of a sandbox. */
  getFaq(sandboxId: string, faqId: string): Promise<FaqRow | undefined>;
  /**
   * Replaces an FAQ's body; false when it does not exist or the new slug is taken. With `draftOnly` (a body the
   * content scan has not seen), false too when the FAQ is published by then: decided in the same statement, so a
   * publication committed after the caller read the FAQ as a draft never goes live with this body unscanned.
   */
  updateFaq(sandboxId: string, faqId: string, body: FaqBody, now: number, draftOnly?: boolean): Promise<boolean>;
  /** Deletes an FAQ; false when it does not exist. */
  deleteFaq(sandboxId: string, faqId: string): Promise<boolean>;
  /**
   * Publishes an FAQ whose stored body is still `scanned` (the body the content scan passed), compared in the
   * publishing transaction: `changed`, and nothing published, when an edit landed after the scan read it. The
   * first publish moves the sandbox `active` → `published` and rotates the handle (the preview handle is retired
   * forever); later publishes keep the published handle.
   */
  publishFaq(sandboxId: string, faqId: string, now: number, scanned: FaqBody): Promise<PublishResult>;
}

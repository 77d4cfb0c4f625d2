/**
 * The shared suite every audit log writer passes: the JSONL file log (`openAuditLog`) and the PostgreSQL
 * chain (`createPostgresAuditLog`). `factory` opens an empty log; `lines` reads back what it holds.
 */
import { createHash, generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  MAX_AUDIT_LINE_LENGTH,
  verifyAuditChain,
  type AuditEventInput,
  type AuditEventV02,
  type CheckpointSigner,
} from "@acp/core";

/** What both writers offer. */
export interface AuditWriter {
  append(input: AuditEventInput): Promise<AuditEventV02>;
  checkpoint(): Promise<AuditEventV02 | null>;
  close(): Promise<void>;
}

/** An empty log under test and a way to read its lines (without newlines). */
export interface AuditLogUnderTest {
  readonly log: AuditWriter;
  readonly lines: () => Promise<string[]>;
}

/** The options the suite opens logs with. */
export interface AuditCaseOptions {
  readonly clock: () => Date;
  readonly signer?: CheckpointSigner;
  readonly checkpointEvery?: number;
}

export type AuditLogFactory = (options: AuditCaseOptions) => Promise<AuditLogUnderTest>;

const { privateKey, publicKey } = generateKeyPairSync("ed25519");
const clock = (): Date => new Date("2026-01-15T12:00:00.000Z");

export function describeAuditLog(name: string, factory: AuditLogFactory): void {
  describe(`audit log contract: ${name}`, () => {
    it("chains every append into lines that verify, each the event it resolved with", async () => {
      const { log, lines } = await factory({ clock });
      const events: AuditEventV02[] = [];
      for (let i = 0; i < 5; i++)
        events.push(await log.append({ event_type: "policy_evaluated", request_id: `cr_${i}` }));
      await log.close();
      const all = await lines();
      expect(all.map((l) => (JSON.parse(l) as AuditEventV02).event_hash)).toEqual(events.map((e) => e.event_hash));
      expect(events[0]?.previous_event_hash).toBeNull();
      expect(events[3]?.previous_event_hash).toBe(events[2]?.event_hash);
      expect(verifyAuditChain(all)).toMatchObject({ ok: true, count: 5, checkpoints: 0 });
    });

    it("writes an event too long for the verifier with its longest values as length and digest, so the chain still verifies", async () => {
      const { log, lines } = await factory({ clock });
      const content = "x".repeat(1_200_000);
      const keep = "short enough to keep";
      const big = await log.append({
        event_type: "tool_call_intercepted",
        tool: "write_file",
        metadata: { arguments: { path: "/tmp/a", content, note: keep } },
      });
      // 1.4 MB of UTF-8 but 700,000 characters: the verifier reads it, so it is kept whole
      const wide = "é".repeat(700_000);
      await log.append({ event_type: "policy_evaluated", metadata: { arguments: { content: wide } } });
      const heavy = await log.append({
        event_type: "tool_call_intercepted",
        tool: "t".repeat(5000),
        metadata: { numbers: Array.from({ length: 300_000 }, (_, i) => i) },
      });
      await log.close();
      const all = await lines();
      expect(verifyAuditChain(all)).toMatchObject({ ok: true, count: 3 });
      expect(all.every((l) => l.length <= MAX_AUDIT_LINE_LENGTH)).toBe(true);
      const written = JSON.parse(all[0] as string) as AuditEventV02;
      expect(written).toEqual(big);
      const args = written.metadata?.["arguments"] as Record<string, unknown>;
      const digest = createHash("sha256").update(content).digest("hex");
      expect(args).toEqual({
        path: "/tmp/a",
        content: `[omitted from the audit: 1200000 characters, sha256:${digest}]`,
        note: keep,
      });
      expect((JSON.parse(all[1] as string) as AuditEventV02).metadata).toEqual({ arguments: { content: wide } });
      // no long string to give way: the whole metadata is replaced by its size and digest
      const third = JSON.parse(all[2] as string) as AuditEventV02;
      expect(third).toEqual(heavy);
      expect(third.tool).toMatch(/^\[omitted from the audit: 5000 characters, sha256:[0-9a-f]{64}\]$/);
      expect(Object.keys(third.metadata ?? {})).toEqual(["audit_omitted"]);
    });

    it("keeps one chain under concurrent appends", async () => {
      const { log, lines } = await factory({ clock });
      const events = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          log.append({ event_type: "tool_call_intercepted", request_id: `cr_${i}` }),
        ),
      );
      await log.close();
      const all = await lines();
      expect(verifyAuditChain(all)).toMatchObject({ ok: true, count: 40 });
      expect(new Set(all.map((l) => (JSON.parse(l) as AuditEventV02).id))).toEqual(new Set(events.map((e) => e.id)));
    });

    it("writes signed checkpoints every N events and at close", async () => {
      const { log, lines } = await factory({ clock, signer: privateKey, checkpointEvery: 4 });
      for (let i = 0; i < 10; i++) await log.append({ event_type: "policy_evaluated" });
      const manual = await log.checkpoint();
      expect(manual?.event_type).toBe("checkpoint");
      await log.append({ event_type: "policy_evaluated" });
      await log.close();
      const verified = verifyAuditChain(await lines(), { publicKey });
      expect(verified).toMatchObject({ ok: true, signaturesChecked: true, eventsAfterLastCheckpoint: 0 });
      expect(verified.checkpoints).toBe(4);
      const wrongKey = generateKeyPairSync("ed25519").publicKey;
      expect(verifyAuditChain(await lines(), { publicKey: wrongKey }).problem?.code).toBe("bad_checkpoint_signature");
    });

    it("writes no checkpoint without a signer", async () => {
      const { log, lines } = await factory({ clock });
      await log.append({ event_type: "policy_evaluated" });
      expect(await log.checkpoint()).toBeNull();
      await log.close();
      expect(await lines()).toHaveLength(1);
    });

    it("redacts secrets before hashing", async () => {
      const { log, lines } = await factory({ clock });
      const event = await log.append({
        event_type: "tool_call_intercepted",
        metadata: { password: "hunter2", args: { api_key: "sk-live-1234567890abcdef" }, note: "kept" },
      });
      await log.close();
      const text = (await lines()).join("\n");
      expect(text).not.toContain("hunter2");
      expect(text).not.toContain("sk-live-1234567890abcdef");
      expect(text).toContain("kept");
      expect(JSON.stringify(event)).not.toContain("hunter2");
    });

    it("refuses event types only the log writes, and appends after close", async () => {
      const { log, lines } = await factory({ clock });
      await expect(log.append({ event_type: "checkpoint" })).rejects.toMatchObject({ code: "audit_event_reserved" });
      await expect(log.append({ event_type: "audit_recovered" })).rejects.toMatchObject({
        code: "audit_event_reserved",
      });
      await log.close();
      await expect(log.append({ event_type: "policy_evaluated" })).rejects.toMatchObject({ code: "audit_log_closed" });
      expect(await lines()).toEqual([]);
    });
  });
}

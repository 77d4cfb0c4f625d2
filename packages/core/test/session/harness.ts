/**
 * Test harness for sessions: a clock that moves only when told, a seeded random source, a fixed key and
 * escalation handlers that approve, decline or record.
 */
import { createHash } from "node:crypto";
import { expect } from "vitest";
import {
  createSession,
  type Confirmation,
  type EscalationHandler,
  type EscalationQuestion,
  type Session,
  type SessionOptions,
} from "../../src/index.js";

/** A clock that starts at `start` and moves only by `advance`. */
export function createClock(start = "2026-03-02T10:00:00Z"): { now: () => Date; advance: (ms: number) => void } {
  let t = new Date(start).getTime();
  return { now: () => new Date(t), advance: (ms) => void (t += ms) };
}

/** A deterministic random source (SHA-256 of a counter and a seed). */
export function seededRandom(seed = "seed"): (size: number) => Uint8Array {
  let counter = 0;
  return (size) => {
    const out = new Uint8Array(size);
    for (let filled = 0; filled < size;) {
      const block = createHash("sha256").update(`${seed}:${counter++}`).digest();
      out.set(block.subarray(0, Math.min(block.length, size - filled)), filled);
      filled += block.length;
    }
    return out;
  };
}

/** The 32-byte key tests sign with. */
export const KEY = new Uint8Array(32).fill(7);

/** A handler answering every question with `approved`, remembering the questions. */
export function recordingHandler(approved = true): EscalationHandler & { questions: EscalationQuestion[] } {
  const questions: EscalationQuestion[] = [];
  return {
    questions,
    confirm(question) {
      questions.push(question);
      const answer: Confirmation = {
        question_id: question.id,
        subject_hash: question.subject_hash,
        approved,
        by: "alice",
        at: question.asked_at,
      };
      return Promise.resolve(answer);
    },
  };
}

/** Session options with the harness's clock, random source, key and an approving handler. */
export function baseOptions(
  extra: Partial<SessionOptions> = {},
): SessionOptions & { clock: ReturnType<typeof createClock> } {
  const clock = createClock();
  return {
    now: clock.now,
    random: seededRandom(),
    authorityKey: KEY,
    escalation: recordingHandler(true),
    clock,
    ...extra,
  };
}

/** The intent of the representative scenario: prepare my day, and e-mail whom I name. */
export const DAY_INTENT = {
  goal: "prepare my day and send the agenda to my team",
  allowed_actions: ["calendar.*", "email.send", "email.search"],
  forbidden_actions: ["bank.*"],
  trusted_values: { recipients: ["team@example.com"] },
};

/** A session past plan approval (or intent alone), executing. */
export async function executingSession(
  options: { intent?: unknown; plan?: unknown; settings?: unknown; extra?: Partial<SessionOptions> } = {},
): Promise<{ session: Session; clock: ReturnType<typeof createClock> }> {
  const opts = baseOptions({ ...options.extra, settings: options.settings });
  const session = createSession(opts);
  session.setIntent(options.intent ?? DAY_INTENT);
  if (options.plan !== undefined) {
    session.submitPlan(options.plan);
    await session.confirmPlan();
  }
  session.start();
  return { session, clock: opts.clock };
}

/** Asserts that a verdict asks a person, and for (at least) the reason `code`. */
export function expectAsked(verdict: { route: string; reasons: readonly { code: string }[] }, code: string): void {
  expect(verdict.route).toBe("ask");
  expect(verdict.reasons.map((r) => r.code)).toContain(code);
}

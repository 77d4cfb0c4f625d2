/**
 * `GET /v1/audit/verify` reports what `acp audit verify` reports: the first problem, and what the verifier
 * could still tell of the lines after it (`after_problem`), from the same verification, not only the first
 * problem; so does the console's audit page.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readAnchor, verifyAuditFile } from "@acp/store";
import { SESSION_COOKIE, SESSION_TTL_MS } from "@acp/server";
import { at, openTestServerAt, readJson, testKeys } from "./harness.js";

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe("GET /v1/audit/verify on a damaged chain", () => {
  it("reports the lines after the first problem as the verifier tells them, never intact", async () => {
    const home = mkdtempSync(join(tmpdir(), "acp-verify-after-"));
    dirs.push(home);
    const keys = testKeys();
    const first = await openTestServerAt(home, { keys });
    try {
      for (let i = 0; i < 6; i++) {
        const res = await fetch(`${first.url}/v1/decide`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ tool: "list_files", arguments: {}, agent: `probe-${i}` }),
        });
        expect(res.status).toBe(200);
      }
      await first.node.stores.auditLog.flush();
      const intact = await readJson(await fetch(`${first.url}/v1/audit/verify`));
      expect(intact).toMatchObject({ valid: true, ok: true, problem: null, after_problem: null });
    } finally {
      await first.node.close();
    }

    // one line edited in place while the service is stopped: its own hash no longer matches, the lines
    // after it still link up
    const path = join(home, "audit.jsonl");
    const lines = readFileSync(path, "utf8").split("\n");
    const index = lines.findIndex((l) => l.includes('"probe-2"'));
    expect(index).toBeGreaterThan(0);
    lines[index] = (lines[index] ?? "").replace('"probe-2"', '"probe-X"');
    writeFileSync(path, lines.join("\n"));

    const again = await openTestServerAt(home, { keys });
    try {
      const answer = await readJson(await fetch(`${again.url}/v1/audit/verify`));
      const anchor = readAnchor(path);
      const { verification } = await verifyAuditFile(path, {
        publicKey: keys.publicKey,
        ...(anchor !== undefined ? { anchor } : {}),
      });
      const after = verification.afterProblem;
      expect(after).not.toBeNull();
      const signed = after?.lastSignedCheckpoint ?? null;
      expect(signed).not.toBeNull();
      expect(answer).toMatchObject({
        valid: false,
        ok: false,
        problem: { line: index + 1, code: verification.problem?.code },
      });
      expect(at(answer, "after_problem")).toEqual({
        lines: after?.lines,
        linked: after?.linked,
        checkpoints: after?.checkpoints,
        signed_checkpoints: after?.signedCheckpoints,
        last_signed_checkpoint: signed && {
          line: signed.line,
          count: signed.count,
          head_hash: signed.headHash,
          timestamp: signed.timestamp,
        },
        complete: true,
        // the checkpoint written at the first service's close, found at its place after the break
        anchor: { expected_line: after?.anchor?.expectedLine, line: after?.anchor?.expectedLine },
      });
      // the lines after the edited one were read, not left out
      expect(at(answer, "after_problem", "lines")).toBeGreaterThanOrEqual(3);
      expect(at(answer, "after_problem", "linked")).toBe(at(answer, "after_problem", "lines"));

      // the console's audit page says the same, not only the first broken event
      const { id } = await again.node.stores.consoleAuth.createSession(Date.now(), SESSION_TTL_MS);
      const page = await (
        await fetch(`${again.url}/console/audit`, { headers: { cookie: `${SESSION_COOKIE}=${id}` } })
      ).text();
      expect(page).toContain(
        `After it: ${after?.lines} line(s), ${after?.linked} linked to the line before; ` +
          `${after?.checkpoints} checkpoint(s), ${after?.signedCheckpoints} signed with the key. ` +
          `The anchor's checkpoint is at its line, ${after?.anchor?.expectedLine}. ` +
          "Lines after a break are vouched for by their own content only: the chain is not intact.",
      );
    } finally {
      await again.node.close();
    }
  });
});

/** The SQLite log's batcher: the appends of one event-loop turn go to the writer as one group, in order. */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { verifyAuditChain, type AuditEventInput } from "@acp/core";
import { openAuditLog, type AuditLog } from "@acp/store";
import { createBatchedAppender } from "../src/store/batched-appender.js";

const dirs: string[] = [];
const logs: AuditLog[] = [];
afterEach(async () => {
  for (const log of logs.splice(0)) await log.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function open(): Promise<{ log: AuditLog; path: string }> {
  const dir = mkdtempSync(join(tmpdir(), "acp-batched-"));
  dirs.push(dir);
  const path = join(dir, "audit.jsonl");
  const log = await openAuditLog(path, { clock: () => new Date(), fsync: "batch" });
  logs.push(log);
  return { log, path };
}

function event(tool: string, type = "policy_evaluated"): AuditEventInput {
  return { event_type: type, tool, decision: "accept" } as AuditEventInput;
}

function tools(path: string): unknown[] {
  return readFileSync(path, "utf8")
    .trimEnd()
    .split("\n")
    .map((line) => (JSON.parse(line) as { tool: unknown }).tool);
}

describe("batched audit appender", () => {
  it("writes one turn's appends as one group, in order, with one shared promise", async () => {
    const { log, path } = await open();
    let groups = 0;
    const counted = {
      append: (input: AuditEventInput) => log.append(input),
      appendMany: (inputs: readonly AuditEventInput[]) => {
        groups++;
        return log.appendMany(inputs);
      },
      flush: () => log.flush(),
    };
    const batched = createBatchedAppender(counted);
    const first = batched.append(event("a"));
    const second = batched.append(event("b"));
    batched.append(event("c")).catch(() => undefined);
    expect(second).toBe(first);
    await first;
    const next = batched.append(event("d"));
    expect(next).not.toBe(first);
    await batched.flush();
    expect(groups).toBe(2);
    expect(tools(path)).toEqual(["a", "b", "c", "d"]);
    expect(verifyAuditChain(readFileSync(path, "utf8").trimEnd().split("\n"))).toMatchObject({ ok: true, count: 4 });
  });

  it("writes the rest of a group the log refuses whole, and rejects the group", async () => {
    const { log, path } = await open();
    const batched = createBatchedAppender(log);
    const group = batched.append(event("before"));
    batched.append(event("reserved", "checkpoint")).catch(() => undefined); // written by the log itself only
    batched.append(event("after")).catch(() => undefined);
    await expect(group).rejects.toThrow(/written by the log itself/);
    await batched.flush();
    expect(tools(path)).toEqual(["before", "after"]);
  });

  it("flush hands the open group over at once and waits for it", async () => {
    const { log, path } = await open();
    const batched = createBatchedAppender(log);
    void batched.append(event("x"));
    await batched.flush(); // no turn of the event loop needed first
    expect(tools(path)).toEqual(["x"]);
  });
});

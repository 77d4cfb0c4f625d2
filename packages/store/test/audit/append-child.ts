/**
 * Child process for the multi-process test: appends `count` events tagged `tag` to the log at `path`
 * with its own writer, then closes. Mode `every` or `batch` (one `append` per event), or `many`
 * (`appendMany` calls of 10 events in batch mode, all in flight, batches of at most 16 events), signing with
 * the PEM private key at `keyPath`.
 * Bundled with esbuild from the sources by the test.
 */
import { createPrivateKey } from "node:crypto";
import { readFileSync } from "node:fs";
import { openAuditLog, type AuditFsyncMode } from "../../src/audit/index.js";

const [path = "", count = "0", tag = "", mode = "every", keyPath = ""] = process.argv.slice(2);
// the home's one key, as every process of a home signs with it (a checkpoint signed with another key is
// a log from another home, refused when there is no anchor yet)
const privateKey = createPrivateKey(readFileSync(keyPath, "utf8"));
const log = await openAuditLog(path, {
  clock: () => new Date(),
  fsync: (mode === "many" ? "batch" : mode) as AuditFsyncMode,
  signer: privateKey,
  checkpointEvery: 50,
  maxBatch: mode === "many" ? 16 : 4096,
});
const pending = [];
for (let i = 0; mode === "many" && i < Number(count); i += 10) {
  const inputs = Array.from({ length: Math.min(10, Number(count) - i) }, (_, k) => ({
    event_type: "tool_call_intercepted" as const,
    agent: tag,
    metadata: { i: i + k },
  }));
  pending.push(log.appendMany(inputs));
}
for (let i = 0; mode !== "many" && i < Number(count); i++) {
  const append = log.append({ event_type: "tool_call_intercepted", agent: tag, metadata: { i } });
  if (mode === "every") await append;
  else pending.push(append);
}
await Promise.all(pending);
await log.close();

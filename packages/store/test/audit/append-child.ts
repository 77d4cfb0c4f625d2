/**
 * Child process for the multi-process test: appends `count` events tagged `tag` to the log at `path`
 * with its own writer, then closes. Bundled with esbuild from the sources by the test.
 */
import { generateKeyPairSync } from "node:crypto";
import { openAuditLog, type AuditFsyncMode } from "../../src/audit/index.js";

const [path = "", count = "0", tag = "", mode = "every"] = process.argv.slice(2);
const { privateKey } = generateKeyPairSync("ed25519");
const log = await openAuditLog(path, {
  clock: () => new Date(),
  fsync: mode as AuditFsyncMode,
  signer: privateKey,
  checkpointEvery: 50,
});
const pending = [];
for (let i = 0; i < Number(count); i++) {
  const append = log.append({ event_type: "tool_call_intercepted", agent: tag, metadata: { i } });
  if (mode === "every") await append;
  else pending.push(append);
}
await Promise.all(pending);
await log.close();

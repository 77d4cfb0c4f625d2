/**
 * Child process standing in for a running `acp proxy`: opens the audit log at argv[2] as a writer (which keeps
 * its holder file beside `audit.jsonl.lock` until it closes), says `open` on stdout, and closes the log when its
 * stdin ends. Bundled with esbuild from the sources by init-live-writer.test.ts.
 */
import { openAuditLog } from "@acp/store";

const log = await openAuditLog(process.argv[2] ?? "", { clock: () => new Date() });
process.stdout.write("open\n");
process.stdin.resume();
process.stdin.on("end", () => {
  void log.close().then(() => process.exit(0));
});

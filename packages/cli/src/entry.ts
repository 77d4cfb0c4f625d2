/**
 * The `acp` program: what `bin/acp.js` runs. The bin runs it bundled (`dist/bundle/entry.js`, built from this
 * module's output by `scripts/bundle-cli.mjs`): one file per command instead of ~700 modules, half the
 * start-up of every `acp` (docs/reference/cli.md, "Start-up"). Run `dist/entry.js` itself to load the modules
 * one by one (a test that hooks one module does).
 */
import { endOnClosedPipe } from "./closed-pipe.js";
import { run } from "./main.js";

endOnClosedPipe(process);
process.exitCode = await run(process.argv.slice(2));

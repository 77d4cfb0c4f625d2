// `npm pack` / `npm publish` of @acp/cli ship the repository's docs/ so `acp docs` and every --help pointer
// work where acp is installed: `prepack` copies ../../docs into this package, `postpack` removes the copy.
// The copy is never committed (.gitignore); it is removed only when the repository's own docs/ is there.
import { cpSync, existsSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(new URL("..", import.meta.url));
const source = fileURLToPath(new URL("../../../docs", import.meta.url));
const copy = `${here}docs`;

if (!existsSync(`${source}/reference/cli.md`)) {
  console.error(`pack-docs: no docs at ${source}: run npm pack from the repository checkout`);
  process.exit(1);
}
rmSync(copy, { recursive: true, force: true });
if (process.argv[2] === "copy") cpSync(source, copy, { recursive: true, dereference: false });
else if (process.argv[2] !== "remove") {
  console.error("usage: node scripts/pack-docs.mjs copy|remove");
  process.exit(2);
}

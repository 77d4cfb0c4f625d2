#!/usr/bin/env node
// The `acp` command: the bundled program (../dist/bundle, built by `npm install` through `prepare`, or by
// `npm run build`). Its modules one by one are ../dist/entry.js.
const bundle = new URL("../dist/bundle/entry.js", import.meta.url);
try {
  await import(bundle.href);
} catch (err) {
  // only the bundle itself missing is "not built": a module it cannot find is thrown as it is
  if (err?.code !== "ERR_MODULE_NOT_FOUND" || err.url !== bundle.href) throw err;
  process.stderr.write("acp: not built: run `npm run build` in the ACP checkout (or `npm install`)\n");
  process.exitCode = 1;
}

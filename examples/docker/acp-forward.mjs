#!/usr/bin/env node
// acp-forward: the in-container half of the Docker recipe for `acp run` (docs/guides/sandbox.md#docker).
//
//   node acp-forward.mjs [BRIDGE_DIR]        (default /run/acp)
//
// Inside a container started with `--network none` (only loopback) and the bridge directory of
// `acp run --isolation none --bridge-dir DIR` mounted at BRIDGE_DIR, it listens on the container's own
// loopback and connects each connection to the bridge sockets, which lead to ACP outside:
//   127.0.0.1:47311 -> BRIDGE_DIR/mcp.sock     (MCP: ACP_MCP_URL=http://127.0.0.1:47311/mcp)
//   127.0.0.1:47312 -> BRIDGE_DIR/egress.sock  (HTTP CONNECT proxy: HTTPS_PROXY=http://127.0.0.1:47312)
// the same ports the `acp run` sandbox uses. No dependencies beyond Node; copy it into the image.
// Prints one line `acp-forward: listening on 127.0.0.1:47311 and 127.0.0.1:47312` to stderr when ready.
import { existsSync } from "node:fs";
import { connect, createServer } from "node:net";
import { join } from "node:path";

const bridge = process.argv[2] ?? "/run/acp";
const ROUTES = [
  { port: 47311, socket: "mcp.sock" },
  { port: 47312, socket: "egress.sock" },
];

for (const { socket } of ROUTES) {
  if (!existsSync(join(bridge, socket))) {
    process.stderr.write(
      `acp-forward: \`${join(bridge, socket)}\` does not exist (mount the directory given to \`acp run --bridge-dir\` at ${bridge})\n`,
    );
    process.exit(1);
  }
}

function listen({ port, socket }) {
  const server = createServer((inside) => {
    const outside = connect(join(bridge, socket));
    inside.pipe(outside).pipe(inside);
    inside.on("error", () => outside.destroy());
    outside.on("error", () => inside.destroy());
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve(server));
  });
}

try {
  await Promise.all(ROUTES.map(listen));
} catch (err) {
  process.stderr.write(`acp-forward: cannot listen: ${err.message}\n`);
  process.exit(1);
}
process.stderr.write(`acp-forward: listening on ${ROUTES.map((r) => `127.0.0.1:${r.port}`).join(" and ")}\n`);

import { mkdtempSync, rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openTestServerAt } from "./harness.js";

// acp serve kept every connection a client opened (no total cap: noted last session). It now keeps 4,096
// at once by default (`connections.maxConnections`); one more is closed unanswered and the log says so.
let close: (() => Promise<void>) | undefined;
const opened: Socket[] = [];
afterEach(async () => {
  for (const socket of opened.splice(0)) socket.destroy();
  await close?.();
  close = undefined;
});

describe("acp serve: connections open at once", () => {
  it("closes one beyond the most, says so in the log, and takes one again after another closes", async () => {
    const home = mkdtempSync(join(tmpdir(), "acp-serve-conn-"));
    const lines: string[] = [];
    const { node, url } = await openTestServerAt(home, {
      connections: { maxConnections: 2 },
      log: (line) => lines.push(line),
    });
    close = async () => {
      await node.close();
      rmSync(home, { recursive: true, force: true });
    };
    const { port } = new URL(url);
    /** Opens a connection and asks for the health page: an accepted one answers, a refused one closes. */
    const ask = (): Promise<"answered" | "closed"> =>
      new Promise((resolve) => {
        const socket = connect(Number(port), "127.0.0.1", () =>
          socket.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`),
        );
        opened.push(socket);
        socket.on("error", () => undefined);
        socket.once("data", () => resolve("answered"));
        socket.once("close", () => resolve("closed"));
      });
    expect(await ask()).toBe("answered");
    expect(await ask()).toBe("answered");
    expect(await ask()).toBe("closed");
    expect(lines).toContain("http: 1 connection(s) refused: 2 are open (the most this listener keeps)");
    opened[0]?.destroy();
    // the server sees the close after the client does: ask until it has room again
    let again: string = "closed";
    for (let i = 0; i < 50 && again === "closed"; i++) again = await ask();
    expect(again).toBe("answered");
  });
});

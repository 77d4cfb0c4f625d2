import { EventEmitter } from "node:events";
import type { Server } from "node:http";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { guardConnections } from "../../src/index.js";

// The stall rule on connections whose numbers the test sets: a client that reads (the kernel takes bytes,
// so what libuv holds shrinks or more is handed to it) is never cut off, however long its answer waits;
// one whose waiting bytes do not move for the stall time is.
class FakeSocket extends EventEmitter {
  writableLength = 0;
  writableNeedDrain = false;
  bytesWritten = 0;
  destroyed = false;
  readonly _handle = { writeQueueSize: 0 };
  destroy(): void {
    this.destroyed = true;
  }
}

function setup(): { socket: FakeSocket; lines: string[]; stop: () => void } {
  const server = new EventEmitter() as unknown as Server;
  const lines: string[] = [];
  const stop = guardConnections(server, {
    maxConnections: 10,
    maxUnreadBytes: 64 * 1024 * 1024,
    stalledMs: 1_000,
    checkEveryMs: 100,
    log: (line) => lines.push(line),
    now: () => Date.now(),
  });
  const socket = new FakeSocket();
  const res = Object.assign(new EventEmitter(), { socket, writableLength: 0, writableNeedDrain: false });
  server.emit("request", { socket }, res);
  // one 9 MB answer handed to libuv at once, of which the kernel has taken 1 MB
  socket.writableNeedDrain = true;
  socket.writableLength = 9_000_000;
  res.writableLength = 9_000_000;
  socket.bytesWritten = 9_000_000;
  socket._handle.writeQueueSize = 8_000_000;
  return { socket, lines, stop };
}

describe("guardConnections: the stall rule", () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it("leaves a connection alone while the kernel takes its bytes, however slowly", () => {
    const { socket, lines, stop } = setup();
    for (let i = 0; i < 50; i++) {
      vi.advanceTimersByTime(500);
      socket._handle.writeQueueSize -= 100_000; // 200 kB/s: the client reads
    }
    expect(socket.destroyed).toBe(false);
    expect(lines).toEqual([]);
    stop();
  });

  it("closes it once nothing moved for the stall time, and says so", () => {
    const { socket, lines, stop } = setup();
    vi.advanceTimersByTime(900);
    expect(socket.destroyed).toBe(false);
    vi.advanceTimersByTime(400);
    expect(socket.destroyed).toBe(true);
    expect(lines).toEqual(["http: a connection closed: its client has read nothing of its answers for 1 s"]);
    stop();
  });

  it("counts the stall again from the last time bytes moved", () => {
    const { socket, stop } = setup();
    vi.advanceTimersByTime(800);
    socket._handle.writeQueueSize -= 1;
    vi.advanceTimersByTime(800);
    expect(socket.destroyed).toBe(false);
    vi.advanceTimersByTime(400);
    expect(socket.destroyed).toBe(true);
    stop();
  });
});

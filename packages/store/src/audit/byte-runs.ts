import type { FileHandle } from "node:fs/promises";
import type { StagedAuditLines } from "@acp/core";

/** Most views handed to one `writev`; more are joined into one buffer first (below the usual IOV_MAX of 1024). */
const MAX_VIEWS = 256;

/** Sealed lines as runs of adjacent bytes: consecutive lines staged one after the other make one run. */
export class ByteRuns {
  private readonly buffers: Buffer[] = [];
  private readonly starts: number[] = [];
  private readonly ends: number[] = [];

  add(lines: StagedAuditLines, k: number): void {
    const buffer = lines.buffers[k] as Buffer;
    const start = lines.offsets[4 * k] as number;
    const end = lines.offsets[4 * k + 3] as number;
    const last = this.buffers.length - 1;
    if (last >= 0 && this.buffers[last] === buffer && this.ends[last] === start) this.ends[last] = end;
    else {
      this.buffers.push(buffer);
      this.starts.push(start);
      this.ends.push(end);
    }
  }

  /** A sealed line as text, without its newline. */
  text(lines: StagedAuditLines, k: number): string {
    return (lines.buffers[k] as Buffer).toString(
      "utf8",
      lines.offsets[4 * k],
      (lines.offsets[4 * k + 3] as number) - 1,
    );
  }

  /** The runs as views; more than a `writev` takes at once are joined into one buffer. */
  chunks(): Buffer[] {
    return limitViews(this.buffers.map((buffer, i) => buffer.subarray(this.starts[i], this.ends[i])));
  }
}

/** The views as they are, or joined into one buffer when there are more than one `writev` takes. */
export function limitViews(views: Buffer[]): Buffer[] {
  return views.length > MAX_VIEWS ? [Buffer.concat(views)] : views;
}

/** Writes the chunks in order: one `writev` (one `write` for one chunk), continuing after a short write. */
export async function writeAll(handle: FileHandle, chunks: Buffer[]): Promise<number> {
  let total = 0;
  for (const chunk of chunks) total += chunk.length;
  let rest = chunks;
  for (let written = 0; written < total;) {
    const { bytesWritten } = rest.length === 1 ? await handle.write(rest[0] as Buffer) : await handle.writev(rest);
    written += bytesWritten;
    if (written < total) rest = [Buffer.concat(rest).subarray(bytesWritten)];
  }
  return total;
}

import type { LineCounter } from "yaml";

/** A 1-based line and column in the policy text. */
export interface SourcePosition {
  readonly line: number;
  readonly column: number;
}

/** The 1-based line and column of a character offset. */
export function positionAt(lines: LineCounter, offset: number): SourcePosition {
  const { line, col } = lines.linePos(Math.max(0, offset));
  if (line === 0) return { line: 1, column: offset + 1 };
  return { line, column: col };
}

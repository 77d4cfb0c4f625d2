/** How many lines of one source are said: a burst, then so many a second. */
export interface LineBudgetOptions {
  /** Lines said at once before the rate applies. Default 200. */
  readonly burst?: number;
  /** Lines a second after the burst. Default 100. */
  readonly perSecond?: number;
  readonly now?: () => number;
}

export const DEFAULT_LINE_BURST = 200;
export const DEFAULT_LINES_PER_SECOND = 100;

/**
 * Passes the lines of one source (an upstream's stderr) to `say`, at most a burst and then so many a
 * second: an upstream that floods its stderr cannot flood the proxy's log (synchronous on a pipe or a
 * terminal) and so hold up every other upstream and session. The lines held back are counted and said as
 * one line (`dropped(count)`) a second after the first of them, or before the next line said.
 */
export function budgetLines(
  say: (line: string) => void,
  dropped: (count: number) => string,
  options: LineBudgetOptions = {},
): (line: string) => void {
  const burst = options.burst ?? DEFAULT_LINE_BURST;
  const perSecond = options.perSecond ?? DEFAULT_LINES_PER_SECOND;
  const now = options.now ?? Date.now;
  let tokens = burst;
  let last = now();
  let held = 0;
  let timer: NodeJS.Timeout | undefined;
  const tell = (): void => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (held === 0) return;
    const count = held;
    held = 0;
    say(dropped(count));
  };
  return (line) => {
    const at = now();
    tokens = Math.min(burst, tokens + ((at - last) / 1000) * perSecond);
    last = at;
    if (tokens < 1) {
      held++;
      if (timer === undefined) {
        timer = setTimeout(tell, 1000);
        timer.unref();
      }
      return;
    }
    tokens -= 1;
    tell();
    say(line);
  };
}

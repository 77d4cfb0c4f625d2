/**
 * How long a person has left to answer a consent request, in words: `in 45s`, `in 4m 52s`, `in 1h 5m`;
 * `expired` at or past the end. Shown beside the request's `expires_at` by `acp pending` and the terminal
 * consent prompt, so both say it the same way.
 */
export function timeLeft(ms: number): string {
  if (ms <= 0) return "expired";
  const seconds = Math.ceil(ms / 1000);
  if (seconds < 60) return `in ${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return seconds % 60 === 0 ? `in ${minutes}m` : `in ${minutes}m ${seconds % 60}s`;
  const hours = Math.floor(minutes / 60);
  return minutes % 60 === 0 ? `in ${hours}h` : `in ${hours}h ${minutes % 60}m`;
}

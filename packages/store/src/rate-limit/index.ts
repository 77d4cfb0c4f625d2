/** Rate-limit windows in the SQLite state database. */
export {
  createSqliteRateLimiter,
  RATE_LIMIT_MIGRATIONS,
  type SqliteRateLimiter,
  type SqliteRateLimiterOptions,
} from "./sqlite-rate-limiter.js";
export { RATE_LIMIT_SWEEP_AGE_MS } from "./sweep-age.js";

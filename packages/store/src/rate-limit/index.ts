/** Rate-limit windows in the SQLite state database. */
export {
  createSqliteRateLimiter,
  RATE_LIMIT_MIGRATIONS,
  type SqliteRateLimiter,
  type SqliteRateLimiterOptions,
} from "./sqlite-rate-limiter.js";

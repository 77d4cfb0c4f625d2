export {
  parseTraceEvent,
  parseTraceText,
  PROVENANCE_LABELS,
  TRACE_EVENT_TYPES,
  TRACE_LIMITS,
  type ProvenanceLabel,
  type Trace,
  type TraceEvent,
  type ToolCallEvent,
  type ToolResultEvent,
  type UserInputEvent,
} from "./trace.js";
export { readTraceFile, formatTraceProblems, type TraceFileProblem } from "./read-trace.js";
export { createReplayer, type ReplayConfig, type ReplayedCall, type Replayer } from "./driver.js";
export { NO_SESSION, type ReplaySession, type ReplaySessionFactory } from "./session-seam.js";
export {
  loadReplaySessions,
  createReplaySessions,
  checkReplaySessionConfig,
  OPEN_INTENT,
  type ReplaySessionConfig,
  type ReplaySessionOptions,
} from "./session-runtime.js";
export { summarizeReplay, formatReplayedCall, formatReplaySummary, type ReplaySummary } from "./output.js";

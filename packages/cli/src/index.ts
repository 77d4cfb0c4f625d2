export { run, createProgram, processIo } from "./main.js";
export { EXIT, CliError, type ExitCode } from "./exit-codes.js";
export type { CliIo, CliContext } from "./context.js";
export * from "./replay/index.js";
export * from "./guard/index.js";

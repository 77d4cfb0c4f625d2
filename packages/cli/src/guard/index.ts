/**
 * The in-process guard: wrap an agent's tool functions so every call passes the one pipeline, asks a
 * person when it must, runs with vault credentials the agent never sees, and is audited in the home.
 */
export { openGuard, type Guard, type GuardOptions, type GuardToolOptions } from "./open-guard.js";
export { GuardRefusal, isGuardRefusal, type GuardStop, type GuardRefusalInit } from "./guard-refusal.js";
export { GUARD_CHANNEL, type AskPerson, type GuardAnswer, type GuardQuestion } from "./answer-channel.js";

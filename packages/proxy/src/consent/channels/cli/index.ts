/** The CLI consent channel: the pending-consent table, answered by `acp approve` / `acp deny`. */
export { createCliChannel, type CliChannelOptions } from "./cli-channel.js";
export {
  answerGivenInTime,
  answerPendingConsent,
  arbitrationVerdict,
  readCliAnswer,
  type CliAnswerInput,
  type CliAnswerRecord,
} from "./answer-record.js";

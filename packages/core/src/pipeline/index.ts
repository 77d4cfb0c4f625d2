export type * from "./types.js";
export { actionForRoute, composeVerdicts, type Composition } from "./compose.js";
export { validateActionRequest, REQUEST_LIMITS } from "./validate-request.js";
export { pipelineRefusal } from "./system-refusal.js";
export { annotationsAsClaim, createPipeline, type Pipeline, type PipelineOptions } from "./decide.js";
export { policySource, graphSource, contractSource, type DecisionSource, type GraphSourceOptions } from "./sources.js";

export { checkPromptResult, promptArguments } from './prompts.js';
export {
  COMPLETION_MAX_VALUES,
  COMPLETION_VALUE_MAX,
  type CompletionAnswer,
  templateVariables,
} from './completions.js';
export { type AskHandling, FORWARDED_METHODS, requestLabel, requestName } from './methods.js';
export { errorResult, recordDecision, recordResult, refuse } from './record.js';
export { checkResult, sanitise, upstreamErrorText } from './results.js';
export { runForward } from './run.js';
export { effectiveVersion, sanitiseResult } from './sanitise.js';
export { availability, inputSchema, lookup, PREVIEW_CHARS, rulesAndAsk, shapeAndSize } from './steps.js';
export {
  CallRefused,
  type ForwardedRequest,
  PASS,
  type PipelineDeps,
  type PromptGetRequest,
  type PromptResult,
  type ReadResult,
  type Refusal,
  type RefusalCode,
  type ResourceReadRequest,
  type ResourceTarget,
  type StepOutcome,
  type ToolCallRequest,
  type CompletionRequest,
  type ForwardedMethod,
  type LogLevelRequest,
  type SubscriptionRequest,
} from './types.js';

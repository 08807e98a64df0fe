export {
  COMPLETION_MAX_VALUES,
  COMPLETION_VALUE_MAX,
  type CompletionAnswer,
  templateVariables,
} from './completions.js';
export {
  type AskHandling,
  FORWARDED_METHODS,
  requestLabel,
  requestName,
  shownRequestLabel,
} from './methods.js';
export { checkPromptResult, promptArguments } from './prompts.js';
export { errorResult, recordDecision, recordResult, refuse } from './record.js';
export { checkResult, sanitise, upstreamErrorSource, upstreamErrorText } from './results.js';
export { runForward } from './run.js';
export { effectiveVersion, sanitiseResult } from './sanitise.js';
export { availability, inputSchema, lookup, PREVIEW_CHARS, rulesAndAsk, shapeAndSize } from './steps.js';
export { startToolTask } from './task-run.js';
export {
  CallRefused,
  type CompletionRequest,
  type ForwardedMethod,
  type ForwardedRequest,
  type LogLevelRequest,
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
  type SubscriptionRequest,
  type ToolCallRequest,
} from './types.js';

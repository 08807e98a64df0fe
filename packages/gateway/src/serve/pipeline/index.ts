export { checkPromptResult, promptArguments } from './prompts.js';
export { errorResult, recordDecision, recordResult, refuse, requestLabel, requestName } from './record.js';
export { checkResult, sanitise, upstreamErrorSource, upstreamErrorText } from './results.js';
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
} from './types.js';

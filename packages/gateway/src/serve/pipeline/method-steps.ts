import { UpstreamError } from '../../ports/errors.js';
import type { CallOptions } from '../../ports/upstream.js';
import { taskSupportOf } from '../../tasks/wire.js';
import { checkCompletionResult, completionArguments, upstreamCompletion } from './completions.js';
import { checkPromptResult, promptArguments } from './prompts.js';
import { checkReadResult } from './resources.js';
import { checkResult, type ResultOutcome } from './results.js';
import { type Rebuild, sanitisePrompt, sanitiseRead, sanitiseResult } from './sanitise.js';
import { inputSchema } from './steps.js';
import {
  type ForwardedMethod,
  type ForwardedRequest,
  PASS,
  type PipelineDeps,
  type StepOutcome,
} from './types.js';

/** The steps of one method that differ from the others' (see `runForward`). */
export interface MethodSteps<R extends ForwardedRequest> {
  /** The arguments check, after the rules. */
  checkArguments(
    deps: PipelineDeps,
    request: R,
    args: Record<string, unknown>,
  ): StepOutcome | Promise<StepOutcome>;
  /** The one request sent upstream. */
  forward(request: R, args: Record<string, unknown>, options: CallOptions): Promise<unknown>;
  /** What of the server's answer may go on; a refusal withholds it. */
  checkResult(
    deps: PipelineDeps,
    request: R,
    result: unknown,
  ): ResultOutcome<unknown> | Promise<ResultOutcome<unknown>>;
  /** The rebuild of its answer for the client's protocol version; none for an answer that is only `{}`. */
  readonly rebuild?: Rebuild;
  /** Whether a URI in its answer becomes one the client may then read (a read's are only named). */
  readonly followsLinks?: boolean;
}

/** The request type of a method (a subscription's type serves both of its methods). */
type RequestOf<M extends ForwardedMethod> = ForwardedRequest extends infer R
  ? R extends { method: infer Of }
    ? M extends Of
      ? R
      : never
    : never
  : never;
type StepsTable = { readonly [M in ForwardedMethod]: MethodSteps<RequestOf<M>> };

/** Subscriptions and log levels answer nothing but success: the client is told `{}`. */
const EMPTY: ResultOutcome<unknown> = { reply: {} };
/** Vetted before the pipeline (the URI against what its server offers), or fixed in shape (a level). */
const NOTHING_MORE = () => PASS;

const STEPS: StepsTable = {
  'tools/call': {
    checkArguments: (deps, request, args) => inputSchema(deps, request, args),
    // The pinned schema goes along: a modern upstream's Mcp-Param-* headers come from it. A tool
    // whose pinned definition requires a task is called through the server's own task.
    forward: (request, args, options) =>
      request.upstream!.callTool(request.entry.tool, args, {
        ...options,
        inputSchema: request.entry.inputSchema,
        ...(taskSupportOf(request.entry.presented) === 'required' ? { viaTask: true } : {}),
      }),
    checkResult: (deps, request, result) => checkResult(deps, request, result),
    rebuild: sanitiseResult,
    followsLinks: true,
  },
  'prompts/get': {
    checkArguments: (_deps, request, args) => promptArguments(request, args),
    forward: (request, args, options) =>
      request.upstream!.getPrompt(request.entry.prompt, args as Record<string, string>, options),
    checkResult: (deps, request, result) => checkPromptResult(deps, request, result),
    rebuild: sanitisePrompt,
    followsLinks: true,
  },
  'resources/read': {
    // A read's one argument is its URI, vetted against what the server listed before the pipeline.
    checkArguments: NOTHING_MORE,
    forward: (request, _args, options) => request.upstream!.readResource(request.entry.uri, options),
    checkResult: (deps, request, result) => checkReadResult(deps, request, result),
    rebuild: sanitiseRead,
  },
  'completion/complete': {
    checkArguments: (_deps, request, args) => completionArguments(request, args),
    forward: (request, args, options) =>
      request
        .upstream!.complete(upstreamCompletion(request, args), {
          ...(options.signal ? { signal: options.signal } : {}),
        })
        .catch((error: unknown) => {
          // Named as a call's cancel is, so the result entry says the client cancelled it.
          if (options.signal?.aborted)
            throw new UpstreamError('CALL_CANCELLED', 'the client cancelled the request');
          throw error;
        }),
    checkResult: (_deps, request, result) => checkCompletionResult(request, result),
  },
  'resources/subscribe': {
    checkArguments: NOTHING_MORE,
    forward: (request) => request.upstream!.subscribeResource(request.entry.uri, true),
    checkResult: () => EMPTY,
  },
  'resources/unsubscribe': {
    checkArguments: NOTHING_MORE,
    forward: (request) => request.upstream!.subscribeResource(request.entry.uri, false),
    checkResult: () => EMPTY,
  },
  'logging/setLevel': {
    checkArguments: NOTHING_MORE,
    forward: (request, args) =>
      request.upstream!.setLoggingLevel(String(args.level)).catch((error: unknown) => {
        request.failed?.(error);
        throw error;
      }),
    checkResult: () => EMPTY,
  },
};

/** The steps of `request`'s method. */
export function stepsOf<R extends ForwardedRequest>(request: R): MethodSteps<R> {
  return STEPS[request.method] as unknown as MethodSteps<R>;
}

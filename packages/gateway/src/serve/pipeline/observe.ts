import type { CallObservation, ObservedDecision } from '../../ports/observer.js';
import { requestName } from './methods.js';
import type { ForwardedRequest, PipelineDeps, Refusal } from './types.js';

/** The observers' view of one request (metrics, traces: `ports/observer.ts`); none when none listens. */
export function observeCall(deps: PipelineDeps, request: ForwardedRequest): CallObservation | undefined {
  return deps.observer?.begin({
    method: request.method,
    server: request.entry.server,
    name: requestName(request),
    ...(request.traceparent ? { traceparent: request.traceparent } : {}),
  });
}

/** A refusal as the observers are told it: its rule and code, as its decision entry has them. */
export const refusalObserved = (refusal: Refusal): ObservedDecision => ({
  allowed: false,
  rule: refusal.rule,
  code: refusal.code,
});

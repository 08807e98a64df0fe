import type { Caller } from '../ports/caller.js';
import type { UpstreamRequests } from '../ports/upstream.js';
import { redactedLine } from '../text/redact.js';
import { rendered } from '../text/render.js';
import {
  type LogLevelRequest,
  type PipelineDeps,
  runForward,
  shownRequestLabel,
  upstreamErrorSource,
} from './pipeline/index.js';
import { refusedText } from './refused.js';

/**
 * A client's `logging/setLevel`, forwarded to one server through the pipeline: its whole-server
 * rules decide (`{level}`; an `ask` rule refuses), with a decision and a result entry. Nothing is
 * thrown: the client's own filter is set whatever the servers are told, so what went wrong is a
 * report line, built here with each server-chosen word rendered once.
 */
export async function forwardLogLevel(
  deps: PipelineDeps,
  target: { name: string; upstream: UpstreamRequests },
  level: string,
  caller: Caller,
  log: (line: string) => void,
): Promise<void> {
  const { name, upstream } = target;
  let failure: { error: unknown } | undefined;
  const request: LogLevelRequest = {
    method: 'logging/setLevel',
    entry: { kind: 'log-level', server: name, name: level },
    args: { level },
    caller,
    upstream,
    unavailableReason: '',
    protocolVersion: undefined,
    failed: (error) => {
      failure = { error };
    },
  };
  const outcome = await runForward(deps, request).then(
    (reply) => ({ reply }),
    (error: unknown) => ({ error }),
  );
  if (failure)
    log(
      `ringfence: ${name}: setting its log level failed: ${redactedLine(upstreamErrorSource(failure.error))}`,
    );
  if ('error' in outcome) {
    // An audit write failed: before forwarding (nothing was sent), or the result's after a failure.
    const what = failure ? 'the result of' : 'the decision on';
    const message = redactedLine(String((outcome.error as Error)?.message ?? outcome.error));
    log(`ringfence: audit: ${what} ${shownRequestLabel(request)} could not be recorded: ${message}`);
    return;
  }
  const refused = refusedText(outcome.reply);
  // A server's name and a level need no escaping; the rule's reason is rendered here, once.
  if (!failure && refused !== undefined)
    log(`ringfence: ${name}: the log level was not set: ${rendered(refused, 'line')}`);
}

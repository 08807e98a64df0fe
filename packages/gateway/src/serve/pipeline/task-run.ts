import type { CallToolResult } from '../../ports/caller.js';
import { TaskError, type TaskRegistry, type TaskSnapshot } from '../../tasks/index.js';
import { observeCall, refusalObserved } from './observe.js';
import { recordDecision, recordResult, refuse } from './record.js';
import { callOptions, decideForward, outcomeOf } from './run.js';
import type { PipelineDeps, ToolCallRequest } from './types.js';

/**
 * A task-augmented `tools/call` (either era): decided exactly as a plain call is, by the same
 * steps (`decideForward`: shape, rules and ask, the pinned input schema, availability), before
 * any task exists; a refusal is a plain refusal, its decision entry durable, and no task is made.
 * An allowed call's decision entry names the task; the call then runs in the background under
 * the task's own cancel, and its answer goes through the same result checks and sanitising when
 * it settles. Its result entry is written when the owner first fetches the result (or, never
 * fetched, when it is cancelled or expires). `around` wraps the upstream call (the gateway counts
 * it as in flight to its server, so the server's requests meanwhile reach this caller).
 */
export async function startToolTask(
  deps: PipelineDeps,
  request: ToolCallRequest,
  tasks: TaskRegistry,
  options: { ttlMs?: number; around?: <T>(work: () => Promise<T>) => Promise<T> } = {},
): Promise<{ task: TaskSnapshot } | { refused: CallToolResult }> {
  const owner = {
    ...(request.caller.agent ? { agent: request.caller.agent } : {}),
    ...(request.caller.scope ? { scope: request.caller.scope } : {}),
  };
  const observed = observeCall(deps, request);
  let slot: ReturnType<TaskRegistry['reserve']>;
  try {
    slot = tasks.reserve(owner);
  } catch (error) {
    if (!(error instanceof TaskError)) throw error;
    const refusal = {
      pass: false,
      code: 'TASK_LIMIT',
      rule: 'task-limit',
      reason: 'too many live tasks',
      what: error.message.replace(/^ringfence: /, ''),
    } as const;
    observed?.decided(refusalObserved(refusal));
    return { refused: await refuse(deps, request, refusal) };
  }
  try {
    const decided = await decideForward(deps, request, observed);
    if (!decided.pass) return { refused: decided.reply };
    const task = slot.id;
    const decisionSeq = await recordDecision(deps, request, { ...decided.verdict, task }, decided.digest);
    const around = options.around ?? (<T>(work: () => Promise<T>) => work());
    const snapshot = slot.start(
      {
        // The task's own cancel, not the creating request's (that one ends with the creation);
        // progress has no request left to travel with.
        run: (signal) => {
          observed?.forwarding();
          return around(() =>
            decided.forward(callOptions(deps, { ...request, signal, onProgress: undefined })),
          );
        },
        check: async (settled) => {
          // Observed as a plain call's: the call's time runs from the creating request to this answer checked.
          observed?.answered(settled.ok);
          const { reply, entry } = await outcomeOf(deps, request, settled);
          observed?.ended();
          return {
            reply: reply as CallToolResult,
            record: async () => {
              await recordResult(deps, request, decisionSeq, { ...entry, task });
            },
          };
        },
        abandon: async (why) => {
          await recordResult(deps, request, decisionSeq, {
            result: {},
            isError: true,
            reason:
              why === 'cancelled'
                ? 'task cancelled by its owner before it ended'
                : 'task expired before its result was fetched',
            ...(why === 'cancelled' ? { cancelled: 'client' as const } : {}),
            task,
          });
        },
      },
      { server: request.entry.server, tool: request.entry.tool },
      options.ttlMs,
    );
    return { task: snapshot };
  } finally {
    slot.release();
  }
}

import { UpstreamError } from '../ports/errors.js';
import { RELATED_TASK_META } from './wire.js';

/** The requests a 2025 upstream's task takes, as the upstream client sends them (answers untrusted). */
export interface UpstreamTaskRequests {
  /** `tools/call` with `params.task`: the server answers with a CreateTaskResult. */
  readonly create: (signal: AbortSignal) => Promise<unknown>;
  /** `tasks/result` for the server's task id: waits until the task ends, then its call's answer. */
  readonly result: (taskId: string, signal: AbortSignal) => Promise<unknown>;
  /** `tasks/cancel` for the server's task id. */
  readonly cancel: (taskId: string) => Promise<unknown>;
}

/** The longest task id of a server's the gateway keeps; a longer one is a malformed answer. */
const MAX_UPSTREAM_TASK_ID = 256;

/**
 * A tool call carried by a task on a 2025-11-25 server (its tool requires one, or the server
 * prefers one): create the server's task, wait for its result, and answer as the plain call
 * would have. The server's task id stays here, with the one server that minted it: it never
 * reaches a client (whose task, if any, is the gateway's own), so two servers that mint the same
 * id cannot meet. Aborting `signal` cancels the server's task (`tasks/cancel`) and the wait.
 */
export async function callThroughUpstreamTask(
  server: string,
  requests: UpstreamTaskRequests,
  signal: AbortSignal,
): Promise<unknown> {
  const created = await requests.create(signal);
  const taskId = createdTaskId(created);
  if (taskId === undefined)
    throw new UpstreamError(
      'UPSTREAM_MALFORMED',
      `${server} answered a task-augmented tools/call without a usable task (no task.taskId string of at most ${MAX_UPSTREAM_TASK_ID} characters)`,
    );
  const cancel = () => {
    requests.cancel(taskId).catch(() => {});
  };
  if (signal.aborted) cancel();
  signal.addEventListener('abort', cancel, { once: true });
  try {
    return withoutRelatedTask(await requests.result(taskId, signal));
  } finally {
    signal.removeEventListener('abort', cancel);
  }
}

function createdTaskId(created: unknown): string | undefined {
  if (typeof created !== 'object' || created === null) return undefined;
  const task = (created as { task?: unknown }).task;
  if (typeof task !== 'object' || task === null) return undefined;
  const id = (task as { taskId?: unknown }).taskId;
  return typeof id === 'string' && id.length > 0 && id.length <= MAX_UPSTREAM_TASK_ID ? id : undefined;
}

/** The server's related-task `_meta` names its own id: dropped, so the sanitiser never sees it. */
function withoutRelatedTask(result: unknown): unknown {
  if (typeof result !== 'object' || result === null) return result;
  const meta = (result as { _meta?: unknown })._meta;
  if (typeof meta !== 'object' || meta === null || !(RELATED_TASK_META in meta)) return result;
  const { [RELATED_TASK_META]: _related, ...rest } = meta as Record<string, unknown>;
  return { ...(result as object), _meta: rest };
}

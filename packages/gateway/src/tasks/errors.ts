import { RingfenceError } from '../errors.js';

export type TaskErrorCode =
  /** No task of this caller has that id: unknown, expired, or another principal's (one answer for all). */
  | 'TASK_NOT_FOUND'
  /** Too many live tasks, for this caller or for the gateway. */
  | 'TASK_LIMIT'
  /** A 2025 `tasks/cancel` of a task that already ended. */
  | 'TASK_TERMINAL'
  /** The task was cancelled: it has no result. */
  | 'TASK_CANCELLED';

/**
 * A local error of the task registry. The served endpoint turns it into the JSON-RPC error its
 * era expects (-32602 for all of these): it never crosses the wire as it is.
 */
export class TaskError extends RingfenceError<TaskErrorCode> {}

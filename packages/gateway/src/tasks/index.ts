export { TaskError, type TaskErrorCode } from './errors.js';
export {
  mintTaskId,
  type TaskEvent,
  type TaskOperation,
  TaskRegistry,
  type TaskReservation,
  type TaskSubject,
} from './registry.js';
export {
  type CheckedOutcome,
  DEFAULT_TASK_LIMITS,
  type Settled,
  type TaskLimits,
  type TaskOwner,
  type TaskSnapshot,
  type TaskStatus,
  type TaskWork,
} from './types.js';
export { callThroughUpstreamTask, type UpstreamTaskRequests } from './upstream-task.js';
export {
  created2025,
  created2026,
  detailed2026,
  listedForClient,
  MISSING_CLIENT_CAPABILITY,
  needsTasksExtension,
  RELATED_TASK_META,
  requestedTask,
  requestedTaskId,
  result2025,
  TASKS_CAPABILITY_2025,
  TASKS_EXTENSION,
  task2025,
  taskSupportOf,
} from './wire.js';

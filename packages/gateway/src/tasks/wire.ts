import type { CallToolResult } from '../ports/caller.js';
import type { TaskSnapshot, TaskStatus } from './types.js';

/**
 * The two wire forms of a gateway task. They do not interoperate, so the registry keeps one form
 * of its own (`TaskSnapshot`) and each era's endpoint shows it in its own:
 *
 * - 2025-11-25 (experimental): the client asks with `params.task`; `{task}` on creation,
 *   `tasks/get|result|list|cancel`, `ttl`/`pollInterval`, a tool's `isError` result is `failed`,
 *   and `tasks/result` carries the related-task `_meta`.
 * - 2026-07-28 extension `io.modelcontextprotocol/tasks`: a flat `{resultType:"task", …}` on
 *   creation, `tasks/get` inlines the result, `ttlMs`/`pollIntervalMs`, a tool's `isError`
 *   result is `completed`, and there is no `tasks/result` or `tasks/list`.
 */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
export const RELATED_TASK_META = 'io.modelcontextprotocol/related-task';

/** The 2025 capability ringfence declares: list (own tasks only), cancel, and task-augmented tool calls. */
export const TASKS_CAPABILITY_2025 = { list: {}, cancel: {}, requests: { tools: { call: {} } } } as const;

/** The 2025 `Task` object. */
export function task2025(task: TaskSnapshot): Record<string, unknown> {
  return {
    taskId: task.id,
    status: task.status,
    ...(task.statusMessage !== undefined ? { statusMessage: task.statusMessage } : {}),
    createdAt: task.createdAt,
    lastUpdatedAt: task.lastUpdatedAt,
    ttl: task.ttlMs,
    pollInterval: task.pollIntervalMs,
  };
}

/** The 2025 `CreateTaskResult`. */
export function created2025(task: TaskSnapshot): { task: Record<string, unknown> } {
  return { task: task2025(task) };
}

/** The 2025 `tasks/result` answer: exactly the call's reply, with the related-task `_meta` it must carry. */
export function result2025(id: string, reply: CallToolResult): CallToolResult {
  const meta = typeof reply._meta === 'object' && reply._meta !== null ? (reply._meta as object) : {};
  return { ...reply, _meta: { ...meta, [RELATED_TASK_META]: { taskId: id } } };
}

/** The 2026 `CreateTaskResult`: flat, with nothing of a result. */
export function created2026(task: TaskSnapshot): Record<string, unknown> {
  return { resultType: 'task', ...common2026(task, task.status) };
}

/**
 * The 2026 `tasks/get` answer (a DetailedTask). A tool's error result is a completed task whose
 * result says `isError` (the extension's reading); `reply` is the fetched result, inlined.
 */
export function detailed2026(task: TaskSnapshot, reply: CallToolResult | undefined): Record<string, unknown> {
  const status: TaskStatus = task.status === 'failed' && reply ? 'completed' : task.status;
  return {
    resultType: 'complete',
    ...common2026(task, status),
    ...(reply && (status === 'completed' || status === 'failed')
      ? { result: withoutRelatedTask(reply) }
      : {}),
  };
}

function common2026(task: TaskSnapshot, status: TaskStatus): Record<string, unknown> {
  return {
    taskId: task.id,
    status,
    ...(task.statusMessage !== undefined ? { statusMessage: task.statusMessage } : {}),
    createdAt: task.createdAt,
    lastUpdatedAt: task.lastUpdatedAt,
    ttlMs: task.ttlMs,
    pollIntervalMs: task.pollIntervalMs,
  };
}

function withoutRelatedTask(reply: CallToolResult): CallToolResult {
  if (typeof reply._meta !== 'object' || reply._meta === null) return reply;
  const { [RELATED_TASK_META]: _related, ...meta } = reply._meta as Record<string, unknown>;
  const { _meta, ...rest } = reply;
  return Object.keys(meta).length > 0 ? { ...rest, _meta: meta } : rest;
}

/**
 * What a 2025 client asked of a task-augmented call: undefined when `params.task` is absent (a
 * plain call), else the ttl it asked for (undefined: the default). Anything but an object (or a
 * ttl that is not a positive number) is ignored, as the gateway bounds the ttl anyway.
 */
export function requestedTask(params: unknown): { ttlMs?: number } | undefined {
  if (typeof params !== 'object' || params === null) return undefined;
  const task = (params as { task?: unknown }).task;
  if (typeof task !== 'object' || task === null || Array.isArray(task)) return undefined;
  const ttl = (task as { ttl?: unknown }).ttl;
  return typeof ttl === 'number' && Number.isFinite(ttl) && ttl > 0 ? { ttlMs: ttl } : {};
}

/** The task id a `tasks/*` request names; a missing or non-string one is answered as an unknown id. */
export function requestedTaskId(params: unknown): string {
  const id =
    typeof params === 'object' && params !== null ? (params as { taskId?: unknown }).taskId : undefined;
  return typeof id === 'string' ? id : '';
}

/**
 * A tool's `execution.taskSupport` as its pinned definition declares it (the 2025 form; absent
 * means "forbidden").
 */
export function taskSupportOf(
  definition: Readonly<Record<string, unknown>>,
): 'forbidden' | 'optional' | 'required' {
  const execution = definition.execution;
  if (typeof execution !== 'object' || execution === null) return 'forbidden';
  const support = (execution as { taskSupport?: unknown }).taskSupport;
  return support === 'optional' || support === 'required' ? support : 'forbidden';
}

/**
 * A tool as a client of this era is shown it. The gateway can run any tool as a task, and can run
 * a tool that needs one on the client's behalf, so: a 2025 client that can use tasks sees
 * `required` as `optional` (it may call either way); a client that cannot sees no `execution`
 * (a v1 client refuses to call a `required` tool itself).
 */
export function listedForClient(
  tool: Record<string, unknown>,
  clientHasTasks: boolean,
): Record<string, unknown> {
  if (!('execution' in tool)) return tool;
  const { execution, ...rest } = tool;
  if (!clientHasTasks) {
    if (typeof execution !== 'object' || execution === null) return rest;
    const { taskSupport: _support, ...others } = execution as Record<string, unknown>;
    return Object.keys(others).length > 0 ? { ...rest, execution: others } : rest;
  }
  if (taskSupportOf(tool) !== 'required') return tool;
  return { ...rest, execution: { ...(execution as object), taskSupport: 'optional' } };
}

/** MCP 2026-07-28's "missing required client capability" error code. */
export const MISSING_CLIENT_CAPABILITY = -32021;

/**
 * Whether a server's error says the call needs the tasks extension from its client. The gateway
 * never declares it upstream (SDK 2.4.0's client drops a server's task handle), so such a tool of a
 * 2026-07-28 server cannot be called through ringfence yet; the refusal says so.
 */
export function needsTasksExtension(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, data } = error as { code?: unknown; data?: unknown };
  if (code !== MISSING_CLIENT_CAPABILITY || typeof data !== 'object' || data === null) return false;
  const required = (data as { requiredCapabilities?: { extensions?: unknown } }).requiredCapabilities;
  const extensions = required?.extensions;
  return typeof extensions === 'object' && extensions !== null && TASKS_EXTENSION in extensions;
}

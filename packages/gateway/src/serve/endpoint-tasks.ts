import { ResultSchema } from '@modelcontextprotocol/core';
import {
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  type Server,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { Caller } from '../ports/caller.js';
import {
  created2025,
  created2026,
  detailed2026,
  listedForClient,
  requestedTask,
  requestedTaskId,
  result2025,
  TASKS_EXTENSION,
  TaskError,
  type TaskOwner,
  task2025,
  taskSupportOf,
} from '../tasks/index.js';
import type { Gateway } from './gateway.js';
import { refusedText } from './refused.js';
import type { RequestSink } from './server-requests.js';

/** A JSON-RPC error with the bare text (see `rpcError` in endpoint.ts). */
const invalidParams = (message: string) => new ProtocolError(ProtocolErrorCode.InvalidParams, message);

/** Task errors are the client's to fix (-32602, the code both task forms give); anything else goes on. */
async function taskErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof TaskError) throw invalidParams(error.message);
    throw error;
  }
}

// A task id is read leniently (`requestedTaskId`): a missing or odd one is answered, and audited, as
// an unknown id rather than by a schema error that names nothing.
const TaskParams = z.looseObject({ taskId: z.unknown().optional() });
const ListParams = z.looseObject({ cursor: z.unknown().optional() }).optional();

/** One session's side of the gateway's tasks: who it is, and what its era lets it do. */
export interface TaskSession {
  readonly server: Server;
  readonly gateway: Gateway;
  readonly owner: TaskOwner;
  readonly modern: boolean;
}

/** Whether this request's client can take a task: the 2025 capability, or the 2026 extension in its envelope. */
export function clientTakesTasks(session: TaskSession): boolean {
  const declared = session.server.getClientCapabilities() as
    | { tasks?: unknown; extensions?: Record<string, unknown> }
    | undefined;
  return session.modern
    ? declared?.extensions?.[TASKS_EXTENSION] !== undefined
    : declared?.tasks !== undefined;
}

/**
 * The task methods of one client session, answered from the gateway's registry for this
 * session's principal only (another session of the same agent and scope sees the same tasks;
 * nobody else does). MCP 2025-11-25: `tasks/get|result|list|cancel`. MCP 2026-07-28 (the
 * extension): `tasks/get` (the result inlined), `tasks/update`, `tasks/cancel` (an idempotent
 * ack); `tasks/result` and `tasks/list` are not methods there (the SDK answers -32601).
 */
export function serveTasks(session: TaskSession): void {
  const { server, gateway, owner, modern } = session;
  const tasks = gateway.tasks;
  const id = (params: unknown) => requestedTaskId(params);
  const on = (
    method: string,
    params: z.ZodType,
    handler: (params: unknown, signal: AbortSignal) => Promise<object>,
  ) =>
    server.setRequestHandler(
      method,
      { params, result: ResultSchema },
      (p, ctx) => taskErrors(() => handler(p, ctx.mcpReq.signal)) as never,
    );
  if (!modern) {
    on('tasks/get', TaskParams, async (p) => task2025(await tasks.get(owner, id(p))));
    on('tasks/result', TaskParams, async (p, signal) =>
      result2025(id(p), await tasks.result(owner, id(p), signal)),
    );
    on('tasks/list', ListParams, async () => ({ tasks: tasks.list(owner).map(task2025) }));
    on('tasks/cancel', TaskParams, async (p) => task2025(await tasks.cancel(owner, id(p))));
    return;
  }
  // The extension is declared per request: a client that did not declare it on this one is told what it lacks.
  const needsExtension = (method: string) => {
    if (clientTakesTasks(session)) return;
    throw new MissingRequiredClientCapabilityError(
      { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
      `ringfence: ${method} needs the tasks extension (${TASKS_EXTENSION}) declared in this request's client capabilities.`,
    );
  };
  on('tasks/get', TaskParams, async (p) => {
    needsExtension('tasks/get');
    const { task, reply } = await tasks.fetchIfDone(owner, id(p));
    return detailed2026(task, reply);
  });
  on('tasks/update', TaskParams, async (p) => {
    needsExtension('tasks/update');
    // A gateway task never asks for input (a server's input request is refused on 2026): the
    // answers are ignored, as the extension says of keys it did not ask for.
    await tasks.get(owner, id(p), 'update');
    return {};
  });
  on('tasks/cancel', TaskParams, async (p) => {
    needsExtension('tasks/cancel');
    // Idempotent on 2026: a task that already ended is acknowledged as it is.
    await tasks.cancel(owner, id(p)).catch((error: unknown) => {
      if (!(error instanceof TaskError && error.code === 'TASK_TERMINAL')) throw error;
    });
    return {};
  });
}

/**
 * A `tools/call` as a task, or undefined for a plain call. 2025: the client asked (`params.task`);
 * a refusal is then a JSON-RPC error with the refusal's words (it asked for a CreateTaskResult).
 * 2026: the gateway decides, for a client that declared the extension, when the tool's pinned
 * definition says it may run long (`execution.taskSupport` optional or required); a refusal is
 * the plain refusal result. Either way the call is decided before any task exists.
 */
export async function toolCallAsTask(
  session: TaskSession,
  params: { name: string; arguments?: unknown; task?: unknown },
  caller: Caller,
  protocolVersion: string | undefined,
  call: { sink: RequestSink; signal: AbortSignal },
): Promise<Record<string, unknown> | undefined> {
  const { gateway, modern } = session;
  let asked = modern ? undefined : requestedTask(params);
  if (modern && clientTakesTasks(session)) {
    const listed = gateway.listTools().find((tool) => tool.name === params.name);
    if (listed && taskSupportOf(listed) !== 'forbidden') asked = {};
  }
  if (!asked) return undefined;
  const started = await gateway.callAsTask(params.name, params.arguments, caller, protocolVersion, {
    ...asked,
    ...call,
  });
  if ('refused' in started) {
    if (modern) return started.refused;
    throw invalidParams(refusedText(started.refused) ?? 'ringfence refused the call; no task was created.');
  }
  // `content: []`: the v2 server checks a 2025 tools/call answer as a CallToolResult even when it
  // carries a task; the 2025 CreateTaskResult allows the extra member.
  return modern ? created2026(started.task) : { ...created2025(started.task), content: [] };
}

/** The tools as this client is shown them: `execution` as it can act on it (see `listedForClient`). */
export function toolsForClient(session: TaskSession): Record<string, unknown>[] {
  // 2026 has no `execution.taskSupport` on the wire (the SDK strips it): the gateway decides.
  const takes = !session.modern && clientTakesTasks(session);
  return session.gateway.listTools().map((tool) => listedForClient(tool, takes));
}

import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CancelTaskRequestSchema,
  ErrorCode,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  ListTasksRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { WireError } from '../errors.js';
import type { Caller } from '../ports/caller.js';
import {
  created2025,
  listedForClient,
  requestedTask,
  requestedTaskId,
  result2025,
  TaskError,
  type TaskOwner,
  task2025,
} from '../tasks/index.js';
import type { Gateway } from './gateway.js';
import { refusedText } from './refused.js';
import type { RequestSink } from './server-requests.js';

/** A JSON-RPC error the SDK sends with its code and the bare text (see `rpcError` in endpoint.ts). */
const invalidParams = (message: string) => new WireError(ErrorCode.InvalidParams, message);

/** Task errors are the client's to fix (-32602, the code both task forms give); anything else goes on. */
async function taskErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof TaskError) throw invalidParams(error.message);
    throw error;
  }
}

/**
 * The 2025-11-25 task surface of one client session: `tasks/get|result|list|cancel`, answered from
 * the gateway's registry for this session's principal only (`identity`: another session of the
 * same agent and scope sees the same tasks; nobody else does). The capability is declared by the
 * endpoint (`TASKS_CAPABILITY_2025`).
 */
export function serveTasks2025(server: Server, gateway: Gateway, identity: TaskOwner): void {
  const owner: TaskOwner = {
    ...(identity.agent ? { agent: identity.agent } : {}),
    ...(identity.scope ? { scope: identity.scope } : {}),
  };
  server.setRequestHandler(GetTaskRequestSchema, async (request) =>
    taskErrors(
      async () => task2025(await gateway.tasks.get(owner, requestedTaskId(request.params))) as never,
    ),
  );
  server.setRequestHandler(GetTaskPayloadRequestSchema, async (request, extra) =>
    taskErrors(async () => {
      const id = requestedTaskId(request.params);
      return result2025(id, await gateway.tasks.result(owner, id, extra.signal)) as never;
    }),
  );
  server.setRequestHandler(ListTasksRequestSchema, async () => ({
    tasks: gateway.tasks.list(owner).map(task2025) as never[],
  }));
  server.setRequestHandler(CancelTaskRequestSchema, async (request) =>
    taskErrors(
      async () => task2025(await gateway.tasks.cancel(owner, requestedTaskId(request.params))) as never,
    ),
  );
}

/**
 * A `tools/call` that asked for a task (2025 `params.task`): undefined for a plain call. Decided
 * before any task exists; a refusal is a JSON-RPC error with the refusal's words (a client that
 * asked for a task reads a CreateTaskResult or an error, never a tool result).
 */
export async function toolCallAsTask(
  gateway: Gateway,
  params: { name: string; arguments?: unknown; task?: unknown },
  caller: Caller,
  protocolVersion: string | undefined,
  call: { sink: RequestSink; signal: AbortSignal },
): Promise<Record<string, unknown> | undefined> {
  const asked = requestedTask(params);
  if (!asked) return undefined;
  const started = await gateway.startToolTask(params.name, params.arguments, caller, protocolVersion, {
    ...asked,
    ...call,
  });
  if ('refused' in started)
    throw invalidParams(refusedText(started.refused) ?? 'ringfence refused the call; no task was created.');
  return created2025(started.task);
}

/** The tools as this client is shown them: `execution` as it can act on it (see `listedForClient`). */
export function toolsForClient(gateway: Gateway, server: Server): Record<string, unknown>[] {
  const clientHasTasks = server.getClientCapabilities()?.tasks !== undefined;
  return gateway.listTools().map((tool) => listedForClient(tool, clientHasTasks));
}

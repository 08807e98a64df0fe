import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Whose call is being forwarded: the session a server's mid-call request may go back to (the
 * gateway's `RequestSink`, opaque here). `Gateway.busyWith` runs a forwarded request under its
 * owner; an upstream client reads it once, when the call starts, and keeps it with the call's
 * progress token. A server request that then arrives on that call's own answer stream (HTTP,
 * `upstream/http-transport.ts`) is that call's, whoever else calls the server meanwhile. Read
 * only at the start of a call: never to attribute anything that arrives later by context alone.
 */
const owners = new AsyncLocalStorage<object>();

/** Run `work` as a request of `owner`'s. */
export function asOwner<T>(owner: object, work: () => Promise<T>): Promise<T> {
  return owners.run(owner, work);
}

/** The owner of the request being forwarded now, if one was named. */
export function currentOwner(): object | undefined {
  return owners.getStore();
}

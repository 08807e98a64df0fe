import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Whose call is being forwarded: the session a server's mid-call request may go back to (the
 * gateway's `RequestSink`, opaque here). The gateway names it on the call itself (`CallOptions.owner`,
 * carried by the pipeline from the endpoint), and `startingAs` makes it `currentOwner()` while the
 * upstream call starts; an upstream client reads it once, when the call starts, and keeps it with
 * the call's progress token. A server request that then arrives on that call's own answer stream
 * (HTTP, `upstream/http-transport.ts`) is that call's, whoever else calls the server meanwhile.
 * Read only at the start of a call: never to attribute anything that arrives later by context alone.
 *
 * Why not an AsyncLocalStorage around the whole request: on Node 20 its first `run` turns on
 * async_hooks promise hooks for the rest of the process, so every promise of every call pays for
 * them; the owner is needed at one place only, the start of the upstream call. `asOwner` remains
 * for a caller outside the pipeline that cannot name the owner on the call (it costs those hooks).
 */
const owners = new AsyncLocalStorage<object>();

/** Set only while `startingAs` runs its (synchronous) start. */
let starting: object | undefined;

/** Run `work` as a request of `owner`'s, across its awaits (AsyncLocalStorage: see above). */
export function asOwner<T>(owner: object, work: () => Promise<T>): Promise<T> {
  return owners.run(owner, work);
}

/**
 * Start `start` as a request of `owner`'s: `currentOwner()` is `owner` during its synchronous
 * part only, which is where an upstream call reads it (before its first await). No hooks.
 */
export function startingAs<T>(owner: object | undefined, start: () => T): T {
  if (owner === undefined) return start();
  const before = starting;
  starting = owner;
  try {
    return start();
  } finally {
    starting = before;
  }
}

/** The owner of the request being forwarded now, if one was named. */
export function currentOwner(): object | undefined {
  return starting ?? owners.getStore();
}

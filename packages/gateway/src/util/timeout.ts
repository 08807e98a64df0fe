/**
 * `promise`, or a rejection with `timedOut()` after `ms`: whichever comes first. The timer is
 * cleared either way, so a settled promise leaves nothing behind to keep the process alive.
 */
export function withTimeout<T>(promise: Promise<T>, ms: number, timedOut: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(timedOut()), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

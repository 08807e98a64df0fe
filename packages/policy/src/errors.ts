/**
 * The one error shape used across ringfence's libraries: a stable machine-readable `code`
 * and a message for people that says what happened and what to do next.
 *
 * Each package narrows `Code` to its own union, e.g.
 * `class PolicyError extends RingfenceError<'POLICY_EXPIRED' | 'POLICY_ROLLBACK'> {}`.
 */
export class RingfenceError<Code extends string = string> extends Error {
  readonly code: Code;

  constructor(code: Code, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

export function isRingfenceError(error: unknown): error is RingfenceError {
  return error instanceof RingfenceError;
}

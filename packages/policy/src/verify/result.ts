/**
 * Every reason a verification can give. Stable: tools and CI scripts may match on them.
 * `docs/policy.md` lists what each one means and how to fix it.
 */
export const VERIFY_CODES = [
  'ENVELOPE_MALFORMED',
  'ENVELOPE_WRONG_PAYLOAD_TYPE',
  'ROOT_MISSING',
  'ROOT_MALFORMED',
  'ROOT_WRONG_TYPE',
  'ROOT_KEY_INVALID',
  'ROOT_SIGNATURES_INSUFFICIENT',
  'ROOT_ROTATION_UNSIGNED',
  'ROOT_VERSION_SKIPPED',
  'ROOT_ROLLBACK',
  'ROOT_VERSION_CONFLICT',
  'ROOT_EXPIRED',
  'POLICY_SIGNATURES_INSUFFICIENT',
  'POLICY_MALFORMED',
  'POLICY_NOT_CANONICAL',
  'POLICY_SCHEMA',
  'POLICY_WRONG_TYPE',
  'POLICY_EXPIRED',
  'POLICY_EXPIRES_SOON',
  'POLICY_ROLLBACK',
  'POLICY_VERSION_CONFLICT',
  'INSTALLED_ROOT_MISSING',
  'INSTALLED_POLICY_MISSING',
  'INSTALLED_FILE_UNSAFE',
  'INSTALLED_READ_FAILED',
  'STATE_UNREADABLE',
  'FILE_UNREADABLE',
] as const;

/** One of {@link VERIFY_CODES}. */
export type VerifyCode = (typeof VERIFY_CODES)[number];

/** A refused verification: a stable code and a sentence that says what to do next. */
export interface VerifyFailure {
  ok: false;
  code: VerifyCode;
  message: string;
}

/** Either the verified value (fields of `T`) or a coded refusal. Verification never throws. */
export type VerifyResult<T extends object> = ({ ok: true } & T) | VerifyFailure;

/** Builds a refusal. */
export function refuse(code: VerifyCode, message: string): VerifyFailure {
  return { ok: false, code, message };
}

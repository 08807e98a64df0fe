/**
 * The interface between the credential store and the detectors (issue 27): the store (keyring or
 * encrypted file, and the OAuth token store read-only) implements {@link KnownCredentials}; the
 * egress scan of arguments and the ingress redaction of results read it. Values never leave this
 * shape towards a printer, a log or the audit log: only `id` and `class` may be shown.
 */

/** What kind of secret a credential is; the built-in detectors name their hits with these. */
export type CredentialClass =
  | 'aws'
  | 'github'
  | 'gitlab'
  | 'slack'
  | 'stripe'
  | 'google'
  | 'private-key'
  | 'jwt'
  | 'bearer'
  | 'generic'
  | string;

export interface KnownCredential {
  readonly id: string;
  readonly class: CredentialClass;
  readonly value: string;
  /** Names of the registered servers this credential may be sent to. */
  readonly boundTo: readonly string[];
}

/** Every stored credential, values included (the store implements this). */
export interface KnownCredentials {
  all(): Promise<readonly KnownCredential[]>;
}

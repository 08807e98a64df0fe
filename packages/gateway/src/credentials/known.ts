/**
 * The credentials ringfence knows the values of, as the argument scanner and the result redactor
 * see them (`scan/`): each with its class and the servers it may be sent to. The store
 * (`store.ts`) and the OAuth token store are its sources; tests use an in-memory one.
 */
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
  readonly boundTo: readonly string[] /* server names */;
}

export interface KnownCredentials {
  all(): Promise<readonly KnownCredential[]>;
}

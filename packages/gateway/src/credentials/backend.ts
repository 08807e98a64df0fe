/** Where credential values are kept: the OS keyring, or the encrypted file beside the metadata. */
export type BackendKind = 'secret-service' | 'encrypted-file';

export interface ValueBackend {
  readonly kind: BackendKind;
  /** Where the values are, for people (`secret ls`, `doctor`). */
  readonly where: string;
  get(name: string): Promise<string | undefined>;
  set(name: string, value: string): Promise<void>;
  /** True when there was a value. */
  delete(name: string): Promise<boolean>;
}

export const BACKEND_LABEL: Readonly<Record<BackendKind, string>> = {
  'secret-service': 'OS keyring (Secret Service)',
  'encrypted-file': 'encrypted file',
};

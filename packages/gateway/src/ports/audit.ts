import type { AuditInput } from '../audit/types.js';

/** Where decisions go: the audit log (or a fake in unit tests). */
export interface AuditSink {
  /** Resolves with the entry's seq once it is durable; `defer` lets it share the next write. */
  append(input: AuditInput, options?: { defer?: boolean }): Promise<number>;
}

/** Messages between the guard (main thread) and its validation workers. Types only. */
import type { ArgumentRule, Dialect, SchemaVerdict } from './types.js';

export interface CompileRequest {
  id: number;
  op: 'compile';
  digest: string;
  dialect: Dialect;
  schema: unknown;
  rule: ArgumentRule;
}

export interface ValidateRequest {
  id: number;
  op: 'validate';
  digest: string;
  dialect: Dialect;
  schema: unknown;
  rule: ArgumentRule;
  role: 'arguments' | 'result';
  value: unknown;
}

export type WorkerRequest = CompileRequest | ValidateRequest;

export type WorkerMessage = { type: 'ready' } | { type: 'verdict'; id: number; verdict: SchemaVerdict };

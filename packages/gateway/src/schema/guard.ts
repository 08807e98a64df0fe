/**
 * The schema guard: vets untrusted tool schemas on the main thread (cheap, bounded), then
 * compiles and checks in worker threads with a time budget, so that no schema and no value can
 * hold the gateway's event loop. Every failure is a coded verdict; nothing here throws for one.
 */
import { digestOf } from '@ringfence/policy';
import { resolveLimits } from './limits.js';
import { measureValue } from './measure.js';
import { WorkerPool } from './pool.js';
import { checkSimple, type SimpleSchema, simpleSchema } from './simple.js';
import {
  MAX_VALUE_DEPTH,
  OK,
  refuse,
  type SchemaGuardLimits,
  type SchemaReasonCode,
  type SchemaVerdict,
} from './types.js';
import { analyzeSchema, type SchemaAnalysis } from './vet.js';

/** Checks queued behind busy workers wait at most this many budgets before being refused. */
const WAIT_BUDGETS = 5;

/** Compile failures that do not depend on timing: remembered, so a refused schema costs nothing twice. */
const DETERMINISTIC: ReadonlySet<SchemaReasonCode> = new Set([
  'SCHEMA_PATTERN',
  'SCHEMA_INVALID',
  'SCHEMA_TOO_COMPLEX',
]);
const REMEMBERED_FAILURES = 256;

type Prepared =
  | { verdict: SchemaVerdict & { ok: false } }
  | { verdict: typeof OK; analysis: SchemaAnalysis; digest: string; simple?: SimpleSchema };

/** `key` names who a check is for (e.g. the server); the worker queue is fair between keys. */
export interface CheckOptions {
  readonly key?: string;
}

export interface SchemaGuardOptions {
  limits?: Partial<SchemaGuardLimits>;
  /** Worker threads in the pool (default 2). */
  workers?: number;
}

export interface ToolResultLike {
  structuredContent?: unknown;
  isError?: boolean;
  content?: unknown;
}

export class SchemaGuard {
  readonly limits: SchemaGuardLimits;
  private readonly pool: WorkerPool;
  /** Pinned schemas are passed as the same objects on every call: vet and digest them once. */
  private readonly analyses = new WeakMap<object, Prepared>();
  private readonly compileFailures = new Map<string, SchemaVerdict>();
  private closed = false;

  constructor(options: SchemaGuardOptions = {}) {
    this.limits = resolveLimits(options.limits);
    const size = Math.max(1, Math.floor(options.workers ?? 2));
    this.pool = new WorkerPool({
      size,
      timeoutMs: this.limits.timeoutMs,
      maxWaitMs: this.limits.timeoutMs * WAIT_BUDGETS,
    });
  }

  /** Vets and compiles a schema (in a worker, within the budget). `digest` names what was compiled. */
  async prepare(schema: unknown): Promise<SchemaVerdict & { digest?: string }> {
    const prepared = this.analyze(schema);
    if (!prepared.verdict.ok || !('digest' in prepared)) return prepared.verdict;
    const { analysis, digest } = prepared;
    const failed = this.compileFailures.get(digest);
    if (failed !== undefined) return failed;
    const verdict = await this.pool.run({
      op: 'compile',
      digest,
      dialect: analysis.dialect,
      schema: analysis.compiled,
      rule: analysis.argumentRule,
    });
    this.remember(digest, verdict);
    return verdict.ok ? { ok: true, digest } : verdict;
  }

  /**
   * Arguments must be an object (or absent) valid against `inputSchema`, and may only carry the
   * top-level names the schema declares (see docs/schema-guard.md for the exact rule).
   */
  async checkArguments(
    inputSchema: unknown,
    args: unknown,
    options: CheckOptions = {},
  ): Promise<SchemaVerdict> {
    const value = args ?? {};
    if (typeof value !== 'object' || Array.isArray(value)) {
      return refuse('ARGUMENTS_INVALID', 'the arguments must be a JSON object');
    }
    const size = this.measure(value, 'ARGUMENTS_TOO_LARGE', 'ARGUMENTS_INVALID', 'the arguments');
    if (!size.ok) return size;
    return this.validate(inputSchema, 'arguments', value, options.key);
  }

  /**
   * A result is size-capped; when the tool declares `outputSchema`, a result that is not an
   * error must carry `structuredContent` valid against it.
   */
  async checkResult(
    outputSchema: unknown | undefined,
    result: ToolResultLike,
    options: CheckOptions = {},
  ): Promise<SchemaVerdict> {
    if (typeof result !== 'object' || result === null || Array.isArray(result)) {
      return refuse('RESULT_INVALID', 'the result must be a JSON object');
    }
    const size = this.measure(result, 'RESULT_TOO_LARGE', 'RESULT_INVALID', 'the result');
    if (!size.ok) return size;
    if (outputSchema === undefined || result.isError === true) return OK;
    if (result.structuredContent === undefined) {
      return refuse(
        'RESULT_MISSING_STRUCTURED',
        'the tool declares an output schema but its result carries no structuredContent',
      );
    }
    return this.validate(outputSchema, 'result', result.structuredContent, options.key);
  }

  /** Starts `workers` (default: all) ahead of the first check, so that it waits for no cold start. */
  async warmUp(workers?: number): Promise<void> {
    await this.pool.warmUp(workers);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.pool.close();
  }

  /** Live worker threads (for tests and diagnostics). */
  get workerCount(): number {
    return this.pool.workerCount;
  }

  private async validate(
    schema: unknown,
    role: 'arguments' | 'result',
    value: unknown,
    key?: string,
  ): Promise<SchemaVerdict> {
    const prepared = this.analyze(schema);
    if (!prepared.verdict.ok || !('digest' in prepared)) return prepared.verdict;
    const { analysis, digest } = prepared;
    const failed = this.compileFailures.get(digest);
    if (failed !== undefined) return failed;
    // Vetted simple schemas are checked here: linear in the (capped) value, no budget to enforce.
    // (After close() the pool answers for every schema, so a closed guard refuses alike.)
    if (prepared.simple && !this.closed)
      return checkSimple(prepared.simple, analysis.argumentRule, value, role);
    const verdict = await this.pool.run(
      {
        op: 'validate',
        digest,
        dialect: analysis.dialect,
        schema: analysis.compiled,
        rule: analysis.argumentRule,
        role,
        value,
      },
      key,
    );
    this.remember(digest, verdict);
    return verdict;
  }

  private remember(digest: string, verdict: SchemaVerdict): void {
    if (verdict.ok || !DETERMINISTIC.has(verdict.code)) return;
    this.compileFailures.set(digest, verdict);
    if (this.compileFailures.size > REMEMBERED_FAILURES) {
      const oldest = this.compileFailures.keys().next().value as string;
      this.compileFailures.delete(oldest);
    }
  }

  private measure(
    value: object,
    tooLarge: SchemaReasonCode,
    invalid: SchemaReasonCode,
    subject: string,
  ): SchemaVerdict {
    const measured = measureValue(value, this.limits.maxResultBytes, MAX_VALUE_DEPTH);
    if (measured.ok) return OK;
    switch (measured.kind) {
      case 'size':
        return refuse(tooLarge, `${subject} exceed ${this.limits.maxResultBytes} bytes serialized`);
      case 'depth':
        return refuse(invalid, `${subject} nest deeper than ${MAX_VALUE_DEPTH} levels`);
      default:
        return refuse(
          invalid,
          `${subject} contain ${measured.what} at ${measured.pointer || 'the top level'}, which is not JSON`,
        );
    }
  }

  private analyze(schema: unknown): Prepared {
    const key = typeof schema === 'object' && schema !== null ? schema : undefined;
    const known = key === undefined ? undefined : this.analyses.get(key);
    if (known !== undefined) return known;
    const analyzed = analyzeSchema(schema, this.limits);
    let prepared: Prepared;
    if (!('analysis' in analyzed)) {
      prepared = { verdict: analyzed.verdict };
    } else {
      try {
        const simple = simpleSchema(analyzed.analysis.compiled, analyzed.analysis.argumentRule);
        prepared = {
          verdict: OK,
          analysis: analyzed.analysis,
          digest: digestOf(schema),
          ...(simple ? { simple } : {}),
        };
      } catch (error) {
        prepared = {
          verdict: refuse('SCHEMA_INVALID', error instanceof Error ? error.message : String(error)),
        };
      }
    }
    if (key !== undefined) this.analyses.set(key, prepared);
    return prepared;
  }
}

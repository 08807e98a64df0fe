import { MissingRequiredClientCapabilityError, ProtocolError } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { MissingClientCapability } from '../ports/errors.js';
import { declaredCapabilities, missingCapabilityOf } from './client-capabilities.js';

const BOTH = { sampling: true, elicitation: true };
const NONE = { sampling: false, elicitation: false };

describe('declaredCapabilities', () => {
  it('is what the caller declared AND the registration allows, roots always', () => {
    expect(declaredCapabilities(BOTH, BOTH)).toEqual({ roots: {}, sampling: {}, elicitation: { form: {} } });
    expect(declaredCapabilities(BOTH, NONE)).toEqual({ roots: {} });
    expect(declaredCapabilities(BOTH, undefined)).toEqual({ roots: {} });
    expect(declaredCapabilities(NONE, BOTH)).toEqual({ roots: {} });
    expect(declaredCapabilities({ sampling: false, elicitation: true }, BOTH)).toEqual({
      roots: {},
      elicitation: { form: {} },
    });
  });

  it('takes only `true` from the caller (a truthy non-boolean is not a declaration)', () => {
    const hostile = { sampling: 'yes', elicitation: 1 } as unknown as typeof BOTH;
    expect(declaredCapabilities(BOTH, hostile)).toEqual({ roots: {} });
  });
});

describe('missingCapabilityOf', () => {
  it("is undefined for any other error than the server's -32021", () => {
    expect(missingCapabilityOf(new ProtocolError(-32602, 'bad'), 's', BOTH, BOTH)).toBeUndefined();
    expect(missingCapabilityOf(new Error('x'), 's', BOTH, BOTH)).toBeUndefined();
    expect(missingCapabilityOf(undefined, 's', BOTH, BOTH)).toBeUndefined();
  });

  it('leaves a -32021 naming the tasks extension as it came (the pipeline says what it means)', () => {
    const error = new MissingRequiredClientCapabilityError({
      requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } },
    });
    expect(missingCapabilityOf(error, 'notes', BOTH, BOTH)).toBeUndefined();
  });

  it('says who lacks each capability, and what to do', () => {
    const error = new MissingRequiredClientCapabilityError({
      requiredCapabilities: { sampling: {}, elicitation: { form: {} }, roots: {} },
    });
    const missing = missingCapabilityOf(error, 'notes', { sampling: false, elicitation: true }, BOTH);
    expect(missing).toBeInstanceOf(MissingClientCapability);
    expect(missing?.requiredCapabilities).toEqual({ sampling: {}, elicitation: { form: {} }, roots: {} });
    expect(missing?.message).toContain(
      'notes needs sampling, which this client declared but ringfence did not pass on',
    );
    expect(missing?.message).toContain('--allow-sampling');
    expect(missing?.message).toContain('notes needs elicitation, which ringfence passed on as declared');
    expect(missing?.message).toContain(
      'notes needs the client capability roots, which ringfence does not pass on',
    );
    const undeclared = missingCapabilityOf(error, 'notes', BOTH, NONE);
    expect(undeclared?.message).toContain('notes needs sampling, which this client did not declare');
  });

  it("bounds a hostile server's requiredCapabilities: names of the spec's form, 16 at most, settings up to 1 KiB", () => {
    const named: Record<string, unknown> = {
      sampling: { huge: 'x'.repeat(5000) },
      'bad name\u202E': {},
      '': {},
      elicitation: ['not', 'an', 'object'],
      '../../etc': {},
    };
    for (let i = 0; i < 40; i++) named[`cap${i}`] = { i };
    const error = new ProtocolError(-32021, 'needs things', { requiredCapabilities: named });
    const missing = missingCapabilityOf(error, 'notes', BOTH, BOTH);
    const kept = missing?.requiredCapabilities ?? {};
    expect(Object.keys(kept)).toHaveLength(16);
    expect(kept.sampling).toEqual({});
    expect(kept.elicitation).toEqual({});
    expect(Object.keys(kept)).not.toContain('bad name\u202E');
    expect(Object.keys(kept)).not.toContain('../../etc');
    expect(missing?.serverMessage).toContain('needs things');
  });

  it('a -32021 whose data is not the spec shape still reaches the client, naming nothing', () => {
    const error = new ProtocolError(-32021, 'no', { requiredCapabilities: ['sampling'] });
    const missing = missingCapabilityOf(error, 'notes', BOTH, BOTH);
    expect(missing?.requiredCapabilities).toEqual({});
    expect(missing?.message).toMatch(/did not say which/);
  });
});

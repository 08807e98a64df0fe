// ringfence's sealed requestState (MCP 2026-07-28 rounds) on the SDK's own HMAC codec: what a
// retry may present, and every way a stranger's, a changed, an old or a used state is refused.
import type { ServerContext } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { callDigest } from './call-digest.js';
import { RequestStateRefused, RequestStateSeal } from './sealed-state.js';
import { StateLedger } from './state-ledger.js';

// The codec reads only the method from the context (for its bind tag); the endpoint passes the SDK's.
const ctx = (method = 'tools/call') => ({ mcpReq: { method } }) as unknown as ServerContext;
const ALICE = { agent: 'alice', scope: 'dev' };
const CALL = { method: 'tools/call', target: 'delete', args: { path: 'a' } };

async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(RequestStateRefused);
    return (error as RequestStateRefused).refusal;
  }
  throw new Error('the state was accepted');
}

describe('RequestStateSeal', () => {
  it('gives back what was sealed, once, to the same principal for the same call', async () => {
    const seal = new RequestStateSeal();
    const state = await seal.seal(ctx(), ALICE, CALL, { server: 'files', asking: true, up: 'UP' });
    expect(await seal.open(ctx(), ALICE, CALL, state)).toEqual({ server: 'files', asking: true, up: 'UP' });
    expect(await refusal(seal.open(ctx(), ALICE, CALL, state))).toBe('used');
  });

  it('refuses a state changed in any byte (payload or MAC)', async () => {
    const seal = new RequestStateSeal();
    const state = await seal.seal(ctx(), ALICE, CALL, { server: 'files' });
    const [v, body, mac] = state.split('.');
    const payload = JSON.parse(Buffer.from(body!, 'base64url').toString());
    payload.p.approved = true;
    const forged = `${v}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${mac}`;
    expect(await refusal(seal.open(ctx(), ALICE, CALL, forged))).toBe('mac');
    expect(await refusal(seal.open(ctx(), ALICE, CALL, `${state}-TAMPERED`))).toBe('mac');
    expect(await refusal(seal.open(ctx(), ALICE, CALL, 'not a state'))).toBe('malformed');
    expect(await refusal(seal.open(ctx(), ALICE, CALL, 'v1.e30.AAAA'))).toBe('mac');
    expect(await refusal(seal.open(ctx(), ALICE, CALL, 42))).toBe('malformed');
    // The owner can still use the real one: refusals of forgeries do not spend it.
    expect(await seal.open(ctx(), ALICE, CALL, state)).toEqual({ server: 'files' });
  });

  it("refuses agent A's state presented by agent B (or another scope), and leaves it to A", async () => {
    const seal = new RequestStateSeal();
    const state = await seal.seal(ctx(), ALICE, CALL, { server: 'files' });
    expect(await refusal(seal.open(ctx(), { agent: 'bob', scope: 'dev' }, CALL, state))).toBe('bind');
    expect(await refusal(seal.open(ctx(), { agent: 'alice', scope: 'prod' }, CALL, state))).toBe('bind');
    expect(await refusal(seal.open(ctx(), {}, CALL, state))).toBe('bind');
    expect(await seal.open(ctx(), ALICE, CALL, state)).toEqual({ server: 'files' });
  });

  it('refuses a state for call X presented with call Y (other arguments, tool or method)', async () => {
    const seal = new RequestStateSeal();
    const state = await seal.seal(ctx(), ALICE, CALL, { server: 'files', approved: true });
    expect(await refusal(seal.open(ctx(), ALICE, { ...CALL, args: { path: 'b' } }, state))).toBe(
      'other-call',
    );
    expect(await refusal(seal.open(ctx(), ALICE, { ...CALL, target: 'delete_all' }, state))).toBe(
      'other-call',
    );
    // Another method: the bind tag names the method too.
    expect(
      await refusal(seal.open(ctx('prompts/get'), ALICE, { ...CALL, method: 'prompts/get' }, state)),
    ).toBe('bind');
    expect(await seal.open(ctx(), ALICE, CALL, state)).toEqual({ server: 'files', approved: true });
  });

  it('refuses an expired state', async () => {
    let now = Date.now();
    const seal = new RequestStateSeal({ ttlSeconds: 1, now: () => now });
    const state = await seal.seal(ctx(), ALICE, CALL, { server: 'files' });
    now += 5_000;
    // The ledger's own expiry (the codec's runs on the wall clock, checked in its own test below).
    expect(await refusal(seal.open(ctx(), ALICE, CALL, state))).toBe('expired');
  });

  it("refuses a state past the codec's expiry (wall clock)", async () => {
    const seal = new RequestStateSeal({ ttlSeconds: -2 });
    const state = await seal.seal(ctx(), ALICE, CALL, { server: 'files' });
    expect(await refusal(seal.open(ctx(), ALICE, CALL, state))).toBe('expired');
  });

  it("refuses another process's state (another key), however well formed", async () => {
    const other = new RequestStateSeal();
    const state = await other.seal(ctx(), ALICE, CALL, { server: 'files' });
    expect(await refusal(new RequestStateSeal().open(ctx(), ALICE, CALL, state))).toBe('mac');
  });

  it('tells the client what happened and what to do, as -32602', () => {
    const error = new RequestStateRefused('used').toProtocolError();
    expect(error.code).toBe(-32602);
    expect(error.message).toMatch(/used already.*Call again without requestState/);
  });
});

describe('StateLedger', () => {
  it('forgets the oldest state of a principal past its cap: that one fails closed, others stay', () => {
    const ledger = new StateLedger({ perPrincipal: 2, max: 10 });
    const far = Date.now() + 60_000;
    const first = ledger.issue('a', far);
    const second = ledger.issue('a', far);
    const bobs = ledger.issue('b', far);
    const third = ledger.issue('a', far);
    expect(ledger.redeem(first, 'a')).toBe('unknown');
    expect(ledger.redeem(second, 'a')).toBe('ok');
    expect(ledger.redeem(third, 'a')).toBe('ok');
    expect(ledger.redeem(bobs, 'a')).toBe('other-principal');
    expect(ledger.redeem(bobs, 'b')).toBe('ok');
  });

  it('holds at most its global cap', () => {
    const ledger = new StateLedger({ perPrincipal: 100, max: 3 });
    const far = Date.now() + 60_000;
    const ids = ['a', 'b', 'c', 'd', 'e'].map((p) => ledger.issue(p, far));
    expect(ledger.size).toBe(3);
    expect(ledger.redeem(ids[0]!, 'a')).toBe('unknown');
    expect(ledger.redeem(ids[4]!, 'e')).toBe('ok');
  });
});

describe('callDigest', () => {
  it('is the same for the same call whatever the key order, and differs otherwise', () => {
    expect(callDigest('tools/call', 't', { a: 1, b: 2 })).toBe(callDigest('tools/call', 't', { b: 2, a: 1 }));
    expect(callDigest('tools/call', 't', { a: 1 })).not.toBe(callDigest('tools/call', 't', { a: 2 }));
    expect(callDigest('tools/call', 't', {})).not.toBe(callDigest('prompts/get', 't', {}));
  });
});

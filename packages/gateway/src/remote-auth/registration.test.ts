import { describe, expect, it } from 'vitest';
import type { Discovery } from './discovery.js';
import { chooseScope } from './login.js';
import { obtainClient } from './registration.js';

const discovery = (
  extra: Partial<Discovery> = {},
  as: Partial<Discovery['authorization_server']> = {},
): Discovery => ({
  resource: 'https://mcp.example.test/mcp',
  resource_origin: 'https://mcp.example.test',
  authorization_server: {
    issuer: 'https://as.example.test',
    authorization_endpoint: 'https://as.example.test/authorize',
    token_endpoint: 'https://as.example.test/token',
    ...as,
  },
  client_id_metadata_document_supported: false,
  iss_parameter_supported: false,
  ...extra,
});
const redirect = 'http://127.0.0.1:5555/callback';
const noNetwork = async () => {
  throw new Error('no request was expected');
};

describe('obtainClient (the spec priority order)', () => {
  it('a pre-registered client wins, with its secret', async () => {
    expect(
      await obtainClient(
        discovery({ client_id_metadata_document_supported: true }),
        redirect,
        {
          client_id: 'pre',
          client_secret: 's',
          client_metadata_url: 'https://org.example/c.json',
        },
        { fetch: noNetwork },
      ),
    ).toEqual({ client_id: 'pre', client_secret: 's', via: 'pre-registered', redirect_uri: redirect });
  });

  it('then the metadata document, only where the AS supports it', async () => {
    expect(
      await obtainClient(
        discovery({ client_id_metadata_document_supported: true }),
        redirect,
        {
          client_metadata_url: 'https://org.example/ringfence/client.json',
        },
        { fetch: noNetwork },
      ),
    ).toEqual({
      client_id: 'https://org.example/ringfence/client.json',
      via: 'metadata-document',
      redirect_uri: redirect,
    });
    await expect(
      obtainClient(
        discovery(),
        redirect,
        { client_metadata_url: 'https://org.example/c.json' },
        { fetch: noNetwork },
      ),
    ).rejects.toMatchObject({ code: 'OAUTH_NO_CLIENT' });
  });

  it('reuses a dynamic client of the same issuer and redirect only; refuses with what to provide', async () => {
    const previous = { client_id: 'dyn', via: 'dynamic' as const, redirect_uri: redirect };
    expect(
      await obtainClient(
        discovery(),
        redirect,
        { previous: { issuer: 'https://as.example.test', client: previous } },
        { fetch: noNetwork },
      ),
    ).toBe(previous);
    await expect(
      obtainClient(
        discovery(),
        redirect,
        { previous: { issuer: 'https://other.example.test', client: previous } },
        { fetch: noNetwork },
      ),
    ).rejects.toMatchObject({
      code: 'OAUTH_NO_CLIENT',
      message: expect.stringMatching(/--client-id ID \[--client-secret-stdin\]/),
    });
    await expect(
      obtainClient(
        discovery({ client_id_metadata_document_supported: true }),
        redirect,
        {},
        { fetch: noNetwork },
      ),
    ).rejects.toMatchObject({ message: expect.stringContaining('--client-metadata-url') });
  });
});

describe('chooseScope', () => {
  const entry = (scope?: string, pending?: string) =>
    ({
      tokens: { access_token: 'a', token_type: 'Bearer', obtained_at: 1, ...(scope ? { scope } : {}) },
      ...(pending ? { pending_scope: pending } : {}),
    }) as never;
  it('first login: the challenge, else the registration, else scopes_supported, else none', () => {
    expect(chooseScope({ challenge_scope: 'a' }, 'b', undefined, undefined)).toEqual({ scope: 'b a' });
    expect(chooseScope({}, 'b', undefined, undefined)).toEqual({ scope: 'b' });
    expect(chooseScope({ scopes_supported: ['x', 'y'] }, undefined, undefined, undefined)).toEqual({
      scope: 'x y',
    });
    expect(chooseScope({}, undefined, undefined, undefined)).toEqual({});
  });
  it('step-up: the union of granted and needed, with why', () => {
    expect(chooseScope({}, undefined, entry('r', 'w'), undefined)).toEqual({
      scope: 'r w',
      why: 'Asking for more access: w (the server said a call needs it), besides what you granted before (r).',
    });
    expect(chooseScope({}, undefined, entry('r'), 'w')).toMatchObject({
      scope: 'r w',
      why: expect.stringContaining('--scope'),
    });
    expect(chooseScope({}, undefined, entry('r w'), undefined)).toEqual({ scope: 'r w' });
  });
});

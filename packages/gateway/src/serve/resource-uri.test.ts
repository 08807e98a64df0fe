import { describe, expect, it } from 'vitest';
import { PREFIXED } from '../catalog/present.js';
import { BARE_URIS, HOSTILE_URIS } from './__fixtures__/hostile-links.js';
import {
  BARE_SCHEMES,
  clientUri,
  compileTemplate,
  isBareSafe,
  serverUri,
  templateMatches,
  uriProblem,
} from './resource-uri.js';

const ONLY = { prefixed: false };

describe('the resource namespace', () => {
  it('prefixes every URI with ringfence:SERVER/ when serving all servers, and maps it back verbatim', () => {
    for (const uri of ['test://static-text', 'file:///etc/passwd', 'a b/%2F/../x?y#z', 'ringfence:x/y']) {
      const shown = clientUri('docs', uri, PREFIXED);
      expect(shown).toBe(`ringfence:docs/${uri}`);
      expect(serverUri(shown)).toEqual({ server: 'docs', uri });
    }
  });

  it('names no server for anything else: a bare URI, an encoded or look-alike server name', () => {
    for (const uri of [
      'test://static-text',
      'ringfence:docs',
      'ringfence:/docs/x',
      'ringfence://docs/x',
      'ringfence:Docs/x',
      'ringfence:do%63s/x',
      'ringfence:docs%2Fx',
      'RINGFENCE:docs/x',
      'ringfence:-docs/x',
      ' ringfence:docs/x',
    ])
      expect(serverUri(uri), uri).toBeUndefined();
  });

  it('with --only, keeps a URI of an allowed scheme as it is and namespaces every other', () => {
    expect(clientUri('docs', 'test://static-text', ONLY)).toBe('test://static-text');
    for (const uri of ['file:///etc/passwd', 'FILE:///x', 'https://example.com/', 'data:,x', 'ringfence:a/b'])
      expect(clientUri('docs', uri, ONLY)).toBe(`ringfence:docs/${uri}`);
    // Schemes no denylist named: a server's own, and app links a client hands to the OS.
    for (const uri of ['memory://entities/1', 'mem://x', 'vscode:extension/x', 'smb://h/s', 'mailto:a@b'])
      expect(clientUri('docs', uri, ONLY)).toBe(`ringfence:docs/${uri}`);
    expect(serverUri('test://static-text', 'docs')).toEqual({ server: 'docs', uri: 'test://static-text' });
    expect(serverUri('ringfence:docs/file:///x', 'docs')).toEqual({ server: 'docs', uri: 'file:///x' });
    // Another server's namespace, or a ringfence: URI that names none, is not the one server's.
    expect(serverUri('ringfence:other/test://x', 'docs')).toBeUndefined();
    expect(serverUri('ringfence:nothing', 'docs')).toBeUndefined();
  });

  describe('a hostile URI never reaches the client as a link it could open itself', () => {
    /** The scheme a WHATWG parser (a browser's, Electron's, Node's) reads in what the client is shown. */
    const parsedScheme = (shown: string) => {
      try {
        return new URL(shown).protocol;
      } catch {
        return undefined;
      }
    };
    const allowed = new Set(['ringfence:', ...[...BARE_SCHEMES].map((s) => `${s}:`)]);

    for (const [mode, naming] of [
      ['serving all servers', PREFIXED],
      ['with --only', ONLY],
    ] as const) {
      it(`${mode}: each of ${HOSTILE_URIS.length} is namespaced, and maps back to the same bytes`, () => {
        for (const uri of HOSTILE_URIS) {
          const shown = clientUri('docs', uri, naming);
          expect(shown, JSON.stringify(uri)).toBe(`ringfence:docs/${uri}`);
          expect(serverUri(shown, naming.prefixed ? undefined : 'docs')).toEqual({ server: 'docs', uri });
          const scheme = parsedScheme(shown);
          expect(scheme === undefined || allowed.has(scheme), `${JSON.stringify(uri)} → ${scheme}`).toBe(
            true,
          );
        }
      });
    }

    it('with --only, shows bare only a plain URI of an allowed scheme', () => {
      for (const uri of BARE_URIS) {
        expect(isBareSafe(uri), uri).toBe(true);
        expect(clientUri('docs', uri, ONLY)).toBe(uri);
        expect(clientUri('docs', uri, PREFIXED)).toBe(`ringfence:docs/${uri}`);
        expect(serverUri(uri, 'docs')).toEqual({ server: 'docs', uri });
      }
      for (const uri of HOSTILE_URIS) expect(isBareSafe(uri), JSON.stringify(uri)).toBe(false);
    });
  });

  it('refuses to expose a URI in the gateway’s own scheme, or one too long to match', () => {
    expect(uriProblem('ringfence:other/test://x')).toMatch(/gateway’s own namespace/);
    expect(uriProblem(`test://${'x'.repeat(9000)}`)).toMatch(/over 8192 characters/);
    expect(uriProblem('test://fine')).toBeUndefined();
  });
});

describe('URI templates', () => {
  const matches = (template: string, uri: string) => templateMatches(compileTemplate(template), uri);

  it('matches one segment for {var}, more for {+var} and {/var}, a query for {?var}', () => {
    expect(matches('test://template/{id}/data', 'test://template/7/data')).toBe(true);
    expect(matches('test://template/{id}/data', 'test://template/7/x/data')).toBe(false);
    expect(matches('test://template/{id}/data', 'test://template/7/data/../../x')).toBe(false);
    expect(matches('test://template/{id}/data', 'test://template/7/datax')).toBe(false);
    expect(matches('test://template/{id}/data', 'xtest://template/7/data')).toBe(false);
    expect(matches('file:///{+path}', 'file:///a/b/c')).toBe(true);
    expect(matches('file:///{+path}', 'file://host/a')).toBe(false);
    expect(matches('repo://x{/path*}', 'repo://x/a/b')).toBe(true);
    expect(matches('search://q{?term,page}', 'search://q?term=a&page=2')).toBe(true);
    expect(matches('search://q{?term,page}', 'search://qz')).toBe(false);
  });

  it('takes literal characters literally, regular-expression ones included', () => {
    expect(matches('a.b://x(y)+/{id}', 'a.b://x(y)+/1')).toBe(true);
    expect(matches('a.b://x(y)+/{id}', 'aXb://x(y)+/1')).toBe(false);
    expect(matches('t://[a]{id}', 't://[a]1')).toBe(true);
  });

  it('refuses a template it cannot read, and matches nothing with it', () => {
    for (const bad of ['t://{', 't://}', 't://{a{b}}', 't://{}', 't://{a b}', `t://${'{a}'.repeat(33)}`]) {
      expect(typeof compileTemplate(bad), bad).toBe('string');
      expect(templateMatches(compileTemplate(bad), 't://x')).toBe(false);
    }
  });

  it('matches in linear time whatever the template (RE2): no backtracking on a hostile one', () => {
    const hostile = compileTemplate(`t://${'{+a}'.repeat(32)}!`);
    const started = process.hrtime.bigint();
    // A backtracking engine takes exponential time on this; RE2 answers at once. The bound is
    // generous (a shared 2-core machine) and only catches the exponential case.
    expect(templateMatches(hostile, `t://${'a'.repeat(8000)}`)).toBe(false);
    expect(Number(process.hrtime.bigint() - started) / 1e9).toBeLessThan(20);
  });
});

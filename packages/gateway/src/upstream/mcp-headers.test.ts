import { describe, expect, it } from 'vitest';
import { headerDeclarations, headerValue, paramHeaders, standardHeaders } from './mcp-headers.js';

const decode = (value: string) => {
  const match = /^=\?base64\?(.*)\?=$/.exec(value);
  return match ? Buffer.from(match[1]!, 'base64').toString('utf8') : undefined;
};

describe('headerValue', () => {
  it('passes plain printable ASCII through', () => {
    expect(headerValue('us-east-1')).toBe('us-east-1');
    expect(headerValue('a b\tc')).toBe('a b\tc');
  });

  it.each([
    ['a newline', 'x\r\nX-Injected: 1'],
    ['a bare LF', 'x\nmcp-session-id: stolen'],
    ['non-ASCII', 'Zürich ✓'],
    ['a NUL', 'a\u0000b'],
    ['DEL', 'a\u007fb'],
    ['leading space', ' a'],
    ['trailing space', 'a '],
    ['empty', ''],
    ['the sentinel itself', '=?base64?aGk=?='],
  ])('wraps %s in the Base64 sentinel, losslessly', (_, value) => {
    const encoded = headerValue(value);
    expect(encoded).toMatch(/^=\?base64\?[A-Za-z0-9+/=]*\?=$/);
    expect(decode(encoded)).toBe(value);
  });
});

describe('standardHeaders', () => {
  const modern = (method: string, params: Record<string, unknown>) => ({
    jsonrpc: '2.0',
    id: 1,
    method,
    params: { ...params, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } },
  });

  it('names version, method and the tool of a modern call', () => {
    expect(standardHeaders(modern('tools/call', { name: 'search' }))).toEqual({
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': 'search',
    });
    expect(standardHeaders(modern('resources/read', { uri: 'file:///a b' }))['mcp-name']).toBe('file:///a b');
    expect(standardHeaders(modern('tools/list', {}))).toEqual({
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/list',
    });
  });

  it('a hostile name cannot break the header', () => {
    const name = standardHeaders(modern('tools/call', { name: 'x\r\nauthorization: y' }))['mcp-name']!;
    expect(name).not.toMatch(/[\r\n]/);
    expect(decode(name)).toBe('x\r\nauthorization: y');
  });

  it('a 2025 request or a notification gets none', () => {
    expect(standardHeaders({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'a' } })).toEqual(
      {},
    );
    expect(
      standardHeaders({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } },
      }),
    ).toEqual({});
  });
});

describe('paramHeaders (x-mcp-header of the pinned schema)', () => {
  const schema = {
    type: 'object',
    properties: {
      region: { type: 'string', 'x-mcp-header': 'Region' },
      dry: { type: 'boolean', 'x-mcp-header': 'Dry-Run' },
      count: { type: 'integer', 'x-mcp-header': 'Count' },
      nested: { type: 'object', properties: { tenant: { type: 'string', 'x-mcp-header': 'Tenant' } } },
      other: { type: 'string' },
    },
  };

  it('mirrors each declared argument, at any depth of properties', () => {
    expect(
      paramHeaders(schema, { region: 'eu-1', dry: false, count: 3, nested: { tenant: 't1' }, other: 'x' }),
    ).toEqual({
      'mcp-param-region': 'eu-1',
      'mcp-param-dry-run': 'false',
      'mcp-param-count': '3',
      'mcp-param-tenant': 't1',
    });
  });

  it('hostile argument values are sentinel-encoded, never raw', () => {
    const headers = paramHeaders(schema, { region: 'eu\r\nX-Evil: 1', nested: { tenant: 'Ünïcødé' } });
    expect(decode(headers['mcp-param-region']!)).toBe('eu\r\nX-Evil: 1');
    expect(decode(headers['mcp-param-tenant']!)).toBe('Ünïcødé');
  });

  it('absent, null or mistyped values get no header', () => {
    expect(paramHeaders(schema, { region: null, dry: 'yes', count: 1.5, nested: 'x' })).toEqual({});
    expect(paramHeaders(schema, { count: 2 ** 60 })).toEqual({});
  });

  it('a schema that breaks the rules declares nothing', () => {
    const bad = (property: Record<string, unknown>) => ({ type: 'object', properties: { a: property } });
    expect(headerDeclarations(bad({ type: 'number', 'x-mcp-header': 'A' }))).toEqual([]);
    expect(headerDeclarations(bad({ type: 'string', 'x-mcp-header': 'A B' }))).toEqual([]);
    expect(headerDeclarations(bad({ type: 'string', 'x-mcp-header': 'A\r\nB' }))).toEqual([]);
    expect(headerDeclarations({ type: 'object', 'x-mcp-header': 'Root' })).toEqual([]);
    expect(
      headerDeclarations({
        type: 'object',
        properties: {
          a: { type: 'string', 'x-mcp-header': 'X' },
          b: { type: 'string', 'x-mcp-header': 'x' },
        },
      }),
    ).toEqual([]);
    // Under items or a combinator: not reachable, so never mirrored.
    expect(
      headerDeclarations({
        type: 'object',
        properties: { list: { type: 'array', items: { type: 'string', 'x-mcp-header': 'I' } } },
      }),
    ).toEqual([]);
  });

  it('only the schema given (the pinned one) decides: the arguments cannot declare a header', () => {
    expect(
      paramHeaders(
        { type: 'object', properties: { a: { type: 'string' } } },
        { a: 'v', 'x-mcp-header': 'A' },
      ),
    ).toEqual({});
  });
});

import { describe, expect, it } from 'vitest';
import { parseAllowEntry, parseCidr } from './index.js';

const IP_REFUSAL =
  'IP addresses cannot be allowed by name (use --allow-address for a range the proxy may reach); write a host name such as api.example.com, api.example.com:8443 or *.example.com';

function refusal(parse: () => unknown): { code: string; message: string } {
  try {
    parse();
  } catch (error) {
    return error as { code: string; message: string };
  }
  throw new Error('accepted');
}

describe('parseAllowEntry', () => {
  it.each([
    ['api.example.com', { name: 'api.example.com', wildcard: false, port: null }],
    ['API.Example.COM.', { name: 'api.example.com', wildcard: false, port: null }],
    ['*.example.com', { name: 'example.com', wildcard: true, port: null }],
    ['api.example.com:8443', { name: 'api.example.com', wildcard: false, port: 8443 }],
    ['*.example.com:1', { name: 'example.com', wildcard: true, port: 1 }],
    ['bücher.example', { name: 'xn--bcher-kva.example', wildcard: false, port: null }],
    [' padded.example ', { name: 'padded.example', wildcard: false, port: null }],
  ])('accepts %j', (text, entry) => {
    expect(parseAllowEntry(text)).toEqual({ ...entry, text });
  });

  it.each([
    '10.0.0.1',
    '10.0.0.1:443',
    '*.10.0.0.1',
    '127.0.0.1.',
    '127.1',
    '2130706433',
    '0177.0.0.1',
    '0x7f.1',
    '0x7f.0.0.1.',
    '999.1.1.1',
    '1.2.3.4.5',
    'example.123',
    'a.0x10',
    '１０.0.0.1',
    '１２７.０.０.１',
    '127。0。0。1',
    '::1',
    '[::1]',
    '[::1]:443',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    'fe80::1%eth0',
    '[fe80::1%25eth0]:80',
    '64:ff9b::a9fe:a9fe',
    '*.[::1]',
  ])('refuses the IP literal %j as an address, whatever its spelling', (text) => {
    const error = refusal(() => parseAllowEntry(text));
    expect(error.code).toBe('EGRESS_BAD_ALLOW_ENTRY');
    expect(error.message).toBe(`--allow "${text}": ${IP_REFUSAL}`);
  });

  it.each([
    ['', 'not a valid host name'],
    ['*.', 'not a valid host name'],
    ['*', 'not a valid host name'],
    ['a..b', 'not a valid host name'],
    ['user@host.example', 'not a valid host name'],
    ['host.example/path', 'not a valid host name'],
    ['a%2eb.example', 'not a valid host name'],
    [`${'a'.repeat(64)}.example`, 'not a valid host name'],
    ['api.example.com:0', 'the port must be a number from 1 to 65535'],
    ['api.example.com:65536', 'the port must be a number from 1 to 65535'],
    ['api.example.com:+80', 'the port must be a number from 1 to 65535'],
    ['api.example.com:', 'the port must be a number from 1 to 65535'],
  ])('refuses %j: %s', (text, why) => {
    const error = refusal(() => parseAllowEntry(text));
    expect(error.code).toBe('EGRESS_BAD_ALLOW_ENTRY');
    expect(error.message).toContain(`--allow "${text}": ${why}`);
  });
});

describe('parseCidr', () => {
  it.each([
    ['10.0.0.0/8', 4, 8],
    ['10.0.0.1', 4, 32],
    ['fd00::/8', 6, 8],
    ['::1', 6, 128],
    ['0.0.0.0/0', 4, 0],
    ['::/0', 6, 0],
    ['10.0.0.0/32', 4, 32],
    ['::/128', 6, 128],
  ])('accepts %s', (text, family, prefix) => {
    expect(parseCidr(text)).toMatchObject({ family, prefix, text });
  });

  it.each([
    '999.1.1.1/99',
    '999.1.1.1/8',
    '10.0.0.0/33',
    '::1/129',
    '',
    '/8',
    '10.0.0.0/',
    '10.0.0.0/-1',
    '10.0.0.0/ 8',
    '10.0.0.0/8/8',
    '10.0.0.0/1e1',
    '10.0.0.0/0x8',
    '10.0.0.0/0008',
    '10.1',
    '0x0a.0.0.0/8',
    'example.com/8',
    '10.0.0.0/8,',
  ])('refuses %j', (text) => {
    const error = refusal(() => parseCidr(text));
    expect(error.code).toBe('EGRESS_BAD_CIDR');
    expect(error.message).toBe(
      `"${text}" is not an address range; write it as ADDRESS/PREFIX, e.g. 10.20.0.0/16 or fd00::/8`,
    );
  });
});

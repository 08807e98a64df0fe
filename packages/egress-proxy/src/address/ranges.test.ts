import { describe, expect, it } from 'vitest';
import { parseCidr } from '../contract/cidr.js';
import { detectIpLiteral, parseIPv4Loose, parseIp } from '../contract/ip.js';
import { classifyAddressText } from './ranges.js';

describe('classifyAddressText', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'this-network'],
    ['169.254.169.254', 'link-local'],
    ['169.254.1.2', 'host-loopback'],
    ['169.254.1.3', 'link-local'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'cgnat'],
    ['100.127.255.255', 'cgnat'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['198.18.0.1', 'benchmarking'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'ipv4-mapped'],
    ['::ffff:8.8.8.8', 'ipv4-mapped'],
    ['::127.0.0.1', 'ipv4-compatible'],
    ['64:ff9b::8.8.8.8', 'nat64'],
    ['64:ff9b:1::1', 'nat64'],
    ['2002:7f00:1::', '6to4'],
    ['2001:0:4136:e378::1', 'teredo'],
    ['fd12:3456::1', 'unique-local'],
    ['fc00::1', 'unique-local'],
    ['fe80::1', 'link-local'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'documentation'],
    ['4000::1', 'reserved'],
  ])('%s is %s', (address, reason) => {
    expect(classifyAddressText(address)).toBe(reason);
  });

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700::1111', '2a00:1450::1'])(
    '%s is public',
    (address) => {
      expect(classifyAddressText(address)).toBeNull();
    },
  );
});

describe('IP literal detection', () => {
  it.each([
    ['2130706433', '127.0.0.1'],
    ['0177.0.0.1', '127.0.0.1'],
    ['0x7f.1', '127.0.0.1'],
    ['127.1', '127.0.0.1'],
    ['127.0.0.1.', '127.0.0.1'],
    ['0xa9fea9fe', '169.254.169.254'],
    ['0251.0376.0251.0376', '169.254.169.254'],
  ])('%s is %s', (text, expected) => {
    const v = detectIpLiteral(text);
    expect(v.literal).toBe(true);
    if (v.literal) expect(Array.from(v.ip?.bytes ?? []).join('.')).toBe(expected);
  });

  it.each(['1.2.3.999', '0x1.0x2.0x3.0x4.5', '08.1', '4294967296'])(
    '%s is an invalid literal, still refused',
    (text) => {
      expect(detectIpLiteral(text).literal).toBe(true);
    },
  );

  it.each(['example.com', '1.2.3.4.example.com', 'x1', '0x7f.example'])('%s is a name', (text) => {
    expect(detectIpLiteral(text).literal).toBe(false);
    expect(parseIPv4Loose(text)).toBeNull();
  });

  it('IPv6 forms, with zone ids and brackets, are literals', () => {
    for (const t of ['[::1]', 'fe80::1%eth0', '[fe80::1%25eth0]', '::ffff:127.0.0.1']) {
      expect(detectIpLiteral(t).literal).toBe(true);
    }
  });
});

describe('parseCidr', () => {
  it('parses both families and refuses nonsense', () => {
    expect(parseCidr('10.0.0.0/8').prefix).toBe(8);
    expect(parseCidr('fd00::/8').family).toBe(6);
    expect(() => parseCidr('10.0.0.0/33')).toThrow(/address range/);
    expect(() => parseCidr('ten/8')).toThrow(/address range/);
    expect(parseIp('::ffff:7f00:1')?.bytes[15]).toBe(1);
  });
});

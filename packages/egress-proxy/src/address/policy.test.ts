import { describe, expect, it } from 'vitest';
import { parseCidr } from '../contract/cidr.js';
import { parseIp } from '../contract/ip.js';
import { AddressPolicy } from './policy.js';

const ip = (text: string) => parseIp(text)!;

describe('the host loopback of rootless engines (pasta: 169.254.1.2)', () => {
  it('is refused like loopback, even inside an exempted range that covers it', () => {
    for (const exempt of [[], ['169.254.0.0/16'], ['169.254.1.2/32'], ['0.0.0.0/0']]) {
      const policy = new AddressPolicy(exempt.map(parseCidr));
      expect(policy.check(ip('169.254.1.2'), 80), exempt.join()).toBe('host-loopback');
      expect(policy.checkText('169.254.1.2', 443), exempt.join()).toBe('host-loopback');
    }
  });

  it('leaves its neighbours to the ordinary rules (link-local, exemptible)', () => {
    expect(new AddressPolicy([]).check(ip('169.254.1.3'), 80)).toBe('link-local');
    expect(new AddressPolicy([parseCidr('169.254.0.0/16')]).check(ip('169.254.1.3'), 80)).toBeNull();
  });
});

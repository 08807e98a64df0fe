export { AddressPolicy } from './address/policy.js';
export { classifyAddress, classifyAddressText } from './address/ranges.js';
export { type AllowEntry, parseAllowEntry } from './contract/allow.js';
export { type Cidr, cidrContains, parseCidr } from './contract/cidr.js';
export type { EgressDecision, TunnelClose } from './contract/decision.js';
export { type EgressErrorCode, EgressProxyError } from './contract/errors.js';
export { normalizeHostName } from './contract/hostname.js';
export { detectIpLiteral, type IpBytes, isIpLiteral, parseIPv4Loose, parseIp } from './contract/ip.js';
export { parseResolvePins } from './contract/resolve-pins.js';
export { Allowlist, hostMatches } from './matching/allowlist.js';
export {
  classifyHost,
  parseAuthority,
  parseConnectTarget,
  parseForwardTarget,
  type TargetParse,
} from './matching/target.js';
export {
  DEFAULTS,
  type EgressProxyOptions,
  type RunningEgressProxy,
  startEgressProxy,
} from './proxy.js';

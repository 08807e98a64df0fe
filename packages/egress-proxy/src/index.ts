export { detectIpLiteral, type IpBytes, isIpLiteral, parseIPv4Loose, parseIp } from './address/ip.js';
export { AddressPolicy } from './address/policy.js';
export {
  type Cidr,
  cidrContains,
  classifyAddress,
  classifyAddressText,
  parseCidr,
} from './address/ranges.js';
export { type EgressErrorCode, EgressProxyError } from './errors.js';
export type { EgressDecision, TunnelClose } from './log/events.js';
export { type AllowEntry, Allowlist, hostMatches, parseAllowEntry } from './matching/allowlist.js';
export {
  classifyHost,
  normalizeHostName,
  parseAuthority,
  parseConnectTarget,
  parseForwardTarget,
  type TargetParse,
} from './matching/target.js';
export {
  DEFAULTS,
  type EgressProxyOptions,
  parseResolvePins,
  type RunningEgressProxy,
  startEgressProxy,
} from './proxy.js';

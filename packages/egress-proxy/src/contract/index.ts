/**
 * `@ringfence/egress-proxy/contract`: what the gateway and the CLI share with the sidecar, with
 * nothing of the proxy server behind it (node built-ins only), so a command that only checks a
 * flag does not load the proxy. The proxy itself uses these same functions.
 */
export { type AllowEntry, DEFAULT_PORTS, parseAllowEntry } from './allow.js';
export {
  buildSidecarArgv,
  EXIT,
  formatListen,
  type ListenAddress,
  parseListen,
  parseSidecarArgv,
  type SidecarArgs,
  type SidecarArgvInput,
  type SidecarInvocation,
  USAGE,
} from './argv.js';
export { type Cidr, cidrContains, parseCidr } from './cidr.js';
export {
  CLOSE_EVENT,
  DECISION_EVENT,
  type EgressDecision,
  type EgressDecisionLine,
  formatCloseLine,
  formatDecisionLine,
  MAX_DECISION_LINE,
  parseDecisionLine,
  type TunnelClose,
} from './decision.js';
export { type EgressErrorCode, EgressProxyError } from './errors.js';
export { normalizeHostName } from './hostname.js';
export { detectIpLiteral, type IpBytes, type IpLiteralVerdict, isIpLiteral, parseIp } from './ip.js';
export {
  formatListeningLine,
  isListeningLine,
  LISTENING_EVENT,
  type ListeningLine,
  parseListeningLine,
} from './listening.js';
export { parseResolvePins } from './resolve-pins.js';

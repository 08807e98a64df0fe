export {
  allowedHosts,
  assertLoopbackListen,
  checkHostAndOrigin,
  generateToken,
  isLoopbackAddress,
  ListenError,
  parseListenAddress,
  type Refusal,
  sha256,
  tokensEqual,
} from './guard.js';
export { answerHealthProbe, HEALTH_PATH } from './health.js';

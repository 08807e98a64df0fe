export {
  type AuthRefusal,
  loginStateOf,
  refreshMarginMs,
  type TokenEvent,
  TokenHolder,
  type TokenHolderOptions,
} from './holder.js';
export {
  isLoginNeeded,
  LoginNeededError,
  type LoginNeededReason,
  loginCommand,
  loginNeededText,
} from './login-needed.js';
export { endpointRefusal, parseTokenResponse, RefreshRefused, refreshTokens } from './refresh.js';
export {
  type AuthorizationServerRecord,
  type ClientRecord,
  type OAuthEntry,
  OAuthTokenStore,
  type OAuthTokensFile,
  parseOAuthTokensFile,
  type TokenRecord,
  tokenDigest,
} from './store.js';
export { type BearerChallenge, MAX_HEADER_LENGTH, parseWwwAuthenticate } from './www-authenticate.js';

export { type CallbackListener, checkAuthorizationResponse, listenForCallback } from './callback.js';
export {
  canonicalResource,
  type DiscoverOptions,
  type Discovery,
  discover,
  resourceNamesServer,
} from './discovery.js';
export { RemoteAuthError, type RemoteAuthErrorCode } from './errors.js';
export {
  type AuthRefusal,
  loginStateOf,
  refreshMarginMs,
  type TokenEvent,
  TokenHolder,
  type TokenHolderOptions,
} from './holder.js';
export { issuerAllowed, issuerListed, listedIssuers } from './issuer-policy.js';
export {
  chooseScope,
  DEFAULT_LOGIN_TIMEOUT_MS,
  type LoginOptions,
  type LoginResult,
  login,
} from './login.js';
export {
  isLoginNeeded,
  LoginNeededError,
  type LoginNeededReason,
  loginCommand,
  loginNeededText,
} from './login-needed.js';
export { createPkcePair, type PkcePair, randomState } from './pkce.js';
export {
  endpointRefusal,
  offOriginRefusal,
  parseTokenResponse,
  RefreshRefused,
  refreshTokens,
} from './refresh.js';
export { CALLBACK_PATH, type ClientChoice, obtainClient } from './registration.js';
export { type RevocationOutcome, revokeTokens } from './revoke.js';
export { guardedFetch, isLoopbackHost, requireSecureUrl } from './safe-fetch.js';
export { droppedNote, type SafeScopes, SCOPE_TOKEN, safeScopes, shellQuoted } from './scope-tokens.js';
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
export { checkAudience, redact, requestToken, type TokenRequest } from './token-request.js';
export { type BearerChallenge, MAX_HEADER_LENGTH, parseWwwAuthenticate } from './www-authenticate.js';

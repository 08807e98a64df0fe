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

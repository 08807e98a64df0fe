export type {
  ChainStatus,
  EntriesPage,
  ExposedByServer,
  GatewayRun,
  Overview,
  PolicyPanel,
  ReviewSide,
  ReviewView,
  ServerView,
  ShownEntry,
  ShownText,
} from './api.js';
export { AuditFeed, CONSOLE_ENTRY_LIMIT } from './audit-feed.js';
export { readOverview } from './overview.js';
export {
  CONSOLE_CSP,
  type ConsoleOptions,
  consoleCookieName,
  type RunningConsole,
  startConsole,
} from './server.js';

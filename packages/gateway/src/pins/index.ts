export { type FingerprintResult, fingerprintTool, type PinnableTool } from './fingerprint.js';
export {
  approvePending,
  type DefinitionDiff,
  diffPending,
  PinError,
  type PinErrorCode,
  type Reconciliation,
  reconcileAndRecord,
  reconcilePins,
  resetPins,
  type WithheldTool,
} from './reconcile.js';
export {
  approveReviewed,
  assertLocalPinsCount,
  formatApprovalReview,
  formatDiff,
  formatPendingReview,
  formatShownPins,
  type PendingReview,
  reviewApproval,
  reviewPending,
  type ShownPins,
  showPins,
} from './review.js';
export {
  emptyServerPins,
  type PendingRecord,
  type PinRecord,
  PinStore,
  type PinsFile,
  parsePinsFile,
  type ServerPins,
} from './store.js';

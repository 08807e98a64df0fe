export {
  canonicalPretty,
  DESCRIPTION_GUTTER,
  descriptionSummary,
  formatWholeDefinition,
  wholeDefinitionLines,
} from './definition-view.js';
export {
  type FingerprintResult,
  fingerprintDefinition,
  fingerprintInstructions,
  fingerprintTool,
  type PinnableDefinition,
} from './fingerprint.js';
export {
  DEFINITION_KINDS,
  type DefinitionKind,
  definitionLabel,
  INSTRUCTIONS_NAME,
  KIND_KEYS,
} from './kinds.js';
export {
  approvePending,
  type DefinitionDiff,
  diffPending,
  type OrgPins,
  PinError,
  type PinErrorCode,
  type ReconcileOptions,
  type Reconciliation,
  reconcileAndRecord,
  reconcilePins,
  resetPins,
  type ShownDefinition,
  type WithheldDefinition,
} from './reconcile.js';
export {
  approveReviewed,
  assertLocalPinsCount,
  formatApprovalReview,
  formatDiff,
  formatPendingReview,
  type PendingReview,
  reviewApproval,
  reviewPending,
} from './review.js';
export {
  formatServerDefinitions,
  formatShownPins,
  type NamedDefinitions,
  type ShownPins,
  selectShown,
  showPins,
} from './show.js';
export {
  emptyServerPins,
  type PendingRecord,
  type PinRecord,
  PinStore,
  type PinsFile,
  parsePinsFile,
  pendingOf,
  pinnedOf,
  type ServerPins,
} from './store.js';

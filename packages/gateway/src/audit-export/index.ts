export { type AgainstCode, type AgainstResult, verifyAgainstExport } from './against.js';
export { ANCHOR_TYPE, anchorRecord, asAnchor, type ChainAnchor } from './anchor.js';
export { ExportError, type ExportErrorCode } from './errors.js';
export { type ExporterOptions, type ExportSummary, exportAuditLog } from './exporter.js';
export { frame, splitOctetCounted, syslogMessage } from './framing.js';
export { OCSF_VERSION, ocsfEvent } from './ocsf.js';
export { type ExportPosition, loadPosition, positionPath, savePosition } from './position.js';
export {
  DEFAULT_ANCHOR_SECONDS,
  type ExportSinkSettings,
  loadExportSettings,
  SETTINGS_FILE,
} from './settings.js';
export { type ExportSink, sinkFor } from './sink.js';
export { type AuditStreaming, startAuditStreaming } from './streaming.js';
export {
  defaultSinkId,
  EXPORT_FORMATS,
  type ExportFormat,
  type ExportTarget,
  parseExportTarget,
  SINK_ID,
  type TlsFiles,
} from './target.js';

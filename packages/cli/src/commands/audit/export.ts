import { Flags } from '@oclif/core';
import { defaultAuditPath } from '@ringfence/gateway/audit';
import {
  DEFAULT_ANCHOR_SECONDS,
  defaultSinkId,
  EXPORT_FORMATS,
  ExportError,
  type ExportFormat,
  type ExportSummary,
  exportAuditLog,
  parseExportTarget,
  SINK_ID,
} from '@ringfence/gateway/audit-export';
import { resolveHome } from '@ringfence/gateway/home';
import { RingfenceCommand } from '../../lib/base-command.js';

export default class AuditExport extends RingfenceCommand {
  static override description =
    'Send the audit log to a collector: syslog (RFC 5424 over TCP or TLS) or JSON lines (a file, or TCP for Vector or Fluent Bit), each entry exactly as the chain holds it or as OCSF API Activity, with the chain head (an anchor) at an interval and at the end. Every entry goes out in order, at least once, resuming from the position kept in the home. See docs/operations.md.';

  static override examples = [
    '<%= config.bin %> audit export --to syslog+tcp://127.0.0.1:514',
    '<%= config.bin %> audit export --to syslog+tls://siem.example.com:6514 --ca /etc/ssl/siem-ca.pem --format ocsf --follow',
    '<%= config.bin %> audit export --to jsonl:/var/log/ringfence/audit-export.jsonl',
    '<%= config.bin %> audit export --to jsonl+tcp://127.0.0.1:9000 --follow --anchor-interval 30',
  ];

  static override flags = {
    to: Flags.string({
      description:
        'Where to send: syslog+tcp://HOST:PORT, syslog+tls://HOST:PORT, jsonl:FILE, jsonl+tcp://HOST:PORT or jsonl+tls://HOST:PORT.',
      required: true,
      helpValue: 'URL',
    }),
    format: Flags.string({
      description:
        'ringfence: each entry exactly as the chain holds it (re-verifiable); ocsf: OCSF API Activity (class 6003).',
      options: [...EXPORT_FORMATS],
      default: 'ringfence',
    }),
    follow: Flags.boolean({
      char: 'f',
      description: 'Keep sending entries as they are written (Ctrl-C stops, after a last anchor).',
    }),
    'anchor-interval': Flags.integer({
      description: `Send the chain head every this many seconds while following (0: only at the end) [default: ${DEFAULT_ANCHOR_SECONDS}].`,
      min: 0,
      helpValue: 'SECONDS',
    }),
    ca: Flags.string({
      description: "+tls: PEM file of the CA the collector's certificate must chain to.",
      helpValue: 'FILE',
    }),
    cert: Flags.string({
      description: '+tls: PEM client certificate, when the collector asks for one.',
      helpValue: 'FILE',
      dependsOn: ['key'],
    }),
    key: Flags.string({ description: '+tls: PEM key of --cert.', helpValue: 'FILE', dependsOn: ['cert'] }),
    'server-name': Flags.string({
      description: "+tls: the name the collector's certificate carries (default: the host).",
      helpValue: 'NAME',
    }),
    id: Flags.string({
      description:
        "Name of this sink's position file (audit-export-ID.json in the home); default: derived from --to and --format, as `mcp serve` derives it.",
      helpValue: 'ID',
    }),
    'new-log': Flags.boolean({
      description:
        "Export the log now at the path from its first entry, after you moved the old one aside on purpose (the collector keeps the old log's entries under its own log id).",
    }),
    file: Flags.string({
      description: 'Log file to export (default: audit.jsonl in RINGFENCE_HOME, ~/.ringfence).',
      helpValue: 'PATH',
    }),
  };

  static override enableJsonFlag = true;

  async run(): Promise<ExportSummary> {
    const { flags } = await this.parse(AuditExport);
    const format = flags.format as ExportFormat;
    const target = parseExportTarget(flags.to, {
      ...(flags.ca ? { ca: flags.ca } : {}),
      ...(flags.cert ? { cert: flags.cert } : {}),
      ...(flags.key ? { key: flags.key } : {}),
      ...(flags['server-name'] ? { serverName: flags['server-name'] } : {}),
    });
    const sinkId = flags.id ?? defaultSinkId(target, format);
    if (!SINK_ID.test(sinkId))
      throw new ExportError(
        'EXPORT_TARGET',
        `--id must be 1-32 of a-z, 0-9 and "-"; "${sinkId}" is not. Give one such as --id siem.`,
      );
    const controller = new AbortController();
    const stop = () => controller.abort();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    try {
      const summary = await exportAuditLog(
        {
          auditPath: flags.file ?? defaultAuditPath(),
          home: resolveHome(),
          target,
          format,
          sinkId,
          follow: flags.follow === true,
          anchorIntervalMs: (flags['anchor-interval'] ?? DEFAULT_ANCHOR_SECONDS) * 1000,
          ...(flags['new-log'] ? { newLog: true } : {}),
          version: this.config.version,
          notice: (message) => this.logToStderr(`ringfence: ${message}`),
        },
        controller.signal,
      );
      if (!this.jsonEnabled()) {
        this.log(
          `exported to ${target.url} (${format}): acknowledged through seq ${summary.position.seq}; ${summary.sent} entries sent${summary.resent > 0 ? ` (${summary.resent} of them again after a lost connection)` : ''}, ${summary.anchors} anchor${summary.anchors === 1 ? '' : 's'}.`,
        );
      }
      return summary;
    } finally {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    }
  }
}

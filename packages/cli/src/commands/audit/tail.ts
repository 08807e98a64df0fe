import { Flags } from '@oclif/core';
import {
  AUDIT_TYPES,
  type AuditLogLine,
  defaultAuditPath,
  describeAuditLine,
  followAuditLog,
  readAuditTail,
} from '@ringfence/gateway/audit';
import { redactJsonLine, terminalSafeJson } from '@ringfence/gateway/text';
import { RingfenceCommand } from '../../lib/base-command.js';

export default class AuditTail extends RingfenceCommand {
  static override description =
    'Show the last entries of the audit log, one line each (seq, time, type, server/tool, verdict and rule). Reading does not verify the chain: use `audit verify` for that.';

  static override examples = [
    '<%= config.bin %> audit tail',
    '<%= config.bin %> audit tail -n 100 --type mcp.decision',
    '<%= config.bin %> audit tail --follow --json',
  ];

  static override flags = {
    lines: Flags.integer({ char: 'n', description: 'How many entries to show.', default: 20, min: 0 }),
    follow: Flags.boolean({
      char: 'f',
      description: 'Keep printing entries as they are appended (Ctrl-C stops).',
    }),
    json: Flags.boolean({
      description:
        'Print the JSON lines as stored (JSON Lines), except that a string holding a secret (a token in a URL, a password) is redacted in a copy of its line (the file is untouched: read it, or run `audit verify`, for the exact bytes); characters a terminal would hide or obey are printed as JSON \\u escapes.',
    }),
    type: Flags.string({ description: 'Only entries of this type.', options: [...AUDIT_TYPES] }),
    file: Flags.string({
      description: 'Log file to read (default: audit.jsonl in RINGFENCE_HOME, ~/.ringfence).',
      helpValue: 'PATH',
    }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(AuditTail);
    const path = flags.file ?? defaultAuditPath();
    const tail = await readAuditTail(path, { count: flags.lines, type: flags.type });
    // --json: the stored line, unless a string in it holds a secret (a reason quoting a URL with
    // its token): then a redacted copy, which no longer hashes to its chain digest. Characters a
    // terminal would hide or obey are printed as JSON \u escapes. `audit verify` reads the file.
    const print = (line: AuditLogLine) =>
      this.log(flags.json ? terminalSafeJson(redactJsonLine(line.raw)) : describeAuditLine(line));
    if (!tail.exists && !flags.follow)
      this.logToStderr(`No audit log at ${path} yet: nothing has been logged.`);
    for (const line of tail.lines) print(line);
    if (!flags.follow) return;

    const controller = new AbortController();
    const stop = () => controller.abort();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    try {
      await followAuditLog(path, {
        from: tail.position,
        signal: controller.signal,
        onLine: (line) => {
          if (flags.type === undefined || line.entry?.type === flags.type) print(line);
        },
        onNotice: (message) => this.logToStderr(message),
      });
    } finally {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    }
  }
}

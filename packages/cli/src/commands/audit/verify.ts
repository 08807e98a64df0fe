import { Flags } from '@oclif/core';
import { type AuditVerifyResult, defaultAuditPath, verifyAuditLog } from '@ringfence/gateway/audit';
import { type AgainstResult, verifyAgainstExport } from '@ringfence/gateway/audit-export';
import { RingfenceCommand } from '../../lib/base-command.js';

const quote = (path: string) => `'${path.replaceAll("'", `'\\''`)}'`;

export default class AuditVerify extends RingfenceCommand {
  static override description =
    'Check the audit log: every line well-formed, seq contiguous, each line naming the SHA-256 of the line before it. Reports the first broken line. Exit 0 intact, 1 broken or unreadable.';

  static override examples = [
    '<%= config.bin %> audit verify',
    '<%= config.bin %> audit verify --json',
    '<%= config.bin %> audit verify --file /backup/audit.jsonl.2026-11',
    '<%= config.bin %> audit verify --against /var/log/ringfence-export.log',
  ];

  static override flags = {
    file: Flags.string({
      description: 'Log file to check (default: audit.jsonl in RINGFENCE_HOME, ~/.ringfence).',
      helpValue: 'PATH',
    }),
    against: Flags.string({
      description:
        "Also check the log against what left the machine: the file a collector wrote from `audit export` (rsyslog's output file, a JSON lines file). Catches a rewrite of the whole log, a cut back, changed or reordered entries, up to the last exported seq.",
      helpValue: 'FILE',
    }),
  };

  static override enableJsonFlag = true;

  async run(): Promise<AuditVerifyResult | AgainstResult> {
    const { flags } = await this.parse(AuditVerify);
    const path = flags.file ?? defaultAuditPath();
    if (flags.against !== undefined) return this.against(path, flags.against);
    const result = await verifyAuditLog(path);
    if (!this.jsonEnabled()) {
      for (const line of report(result)) this.log(line);
    }
    // Exit 1 on a broken log in text and JSON mode alike: scripts read the code.
    if (!result.ok) process.exitCode = 1;
    return result;
  }

  private async against(path: string, against: string): Promise<AgainstResult> {
    const result = await verifyAgainstExport(path, against);
    if (!this.jsonEnabled()) {
      const counts = `${result.entries} local entries; ${against}: ${result.exported} exported entries${result.duplicates > 0 ? ` (+${result.duplicates} repeated: resends after a lost connection, or the same entry in the other form)` : ''}, ${result.anchors} anchors`;
      if (result.ok) {
        this.log(`ok  ${path}: ${result.message}.`);
        this.log(`    ${counts}.`);
        if (result.missing > 0)
          this.log(
            `    ${result.missing} seqs below the last exported one are not in ${against} (an export begun later, or a receiver that lost them).`,
          );
      } else {
        this.log(`MISMATCH  ${path}`);
        this.log(`          ${result.message} (${result.code}).`);
        this.log(`          ${counts}.`);
        this.log("          Keep both files as evidence: the collector's copy is what left this machine.");
      }
    }
    if (!result.ok) process.exitCode = 1;
    return result;
  }
}

function report(result: AuditVerifyResult): string[] {
  if (result.ok) {
    if (!result.exists) return [`ok  ${result.path}: no audit log yet (nothing has been logged); 0 entries.`];
    return [
      `ok  ${result.path}: ${result.entries} entries, chain intact.`,
      `    last hash: ${result.lastHash}`,
      "    Keep a copy of the last hash outside this machine: it is what shows a later rewrite of the whole file (`ringfence audit export` sends it with the entries; then `audit verify --against` the collector's file).",
      ...interruptedLines(result.interrupted),
    ];
  }
  if (result.code === 'AUDIT_UNREADABLE') {
    return [
      `FAIL  ${result.path}: ${result.message}.`,
      '      Check the path and its permissions, then run this again.',
    ];
  }
  const aside = `${result.path}.broken-${new Date().toISOString().slice(0, 10)}`;
  return [
    `BROKEN  ${result.path}`,
    `        ${result.message} (${result.code}).`,
    result.line > 2
      ? `        Lines 1 to ${result.line - 1} are intact.`
      : result.line === 2
        ? '        Line 1 is intact.'
        : '        No line of it can be trusted.',
    '        The log cannot be repaired: keep this file as evidence and move it aside, e.g.',
    `          mv ${quote(result.path)} ${quote(aside)}`,
    '        ringfence starts a new log at the same path with its next entry.',
  ];
}

/** Forwarded calls with no result entry, by the seq of their decision (at most 20 listed). */
function interruptedLines(seqs: readonly number[]): string[] {
  if (seqs.length === 0) return [];
  const shown = seqs.slice(0, 20).join(', ');
  const more = seqs.length > 20 ? ` and ${seqs.length - 20} more` : '';
  return [
    `    ${seqs.length} forwarded call${seqs.length === 1 ? ' has' : 's have'} no result entry (interrupted: the gateway stopped or could not write it, or still running): decision seq ${shown}${more}.`,
    '    Their outcome is unknown: if no gateway is running now, they were cut off; check them on the server side.',
  ];
}

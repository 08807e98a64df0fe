import { type DoctorReport, runDoctor } from '@ringfence/gateway/doctor';
import { RingfenceCommand } from '../lib/base-command.js';
import { formatCheckLines } from '../lib/format.js';

export default class Doctor extends RingfenceCommand {
  static override description =
    'Check this machine: Node.js, the container engine (and whether it has CVE-2024-29018), RINGFENCE_HOME permissions, the installed organisation policy, offline images, and the protocol era (MCP 2025 or 2026-07-28) each registered server was found to speak.';

  static override examples = ['<%= config.bin %> doctor', '<%= config.bin %> doctor --json'];

  static override enableJsonFlag = true;

  async run(): Promise<DoctorReport> {
    await this.parse(Doctor);
    const report = await runDoctor();
    if (!this.jsonEnabled()) {
      for (const line of formatCheckLines(report.checks)) this.log(line);
      this.log(
        report.ok
          ? '\nAll required checks passed.'
          : '\nA required check failed: run the fix shown above, then `ringfence doctor` again.',
      );
    }
    // Exit 1 on a failed required check, in text and JSON mode alike (CI reads the code).
    if (!report.ok) process.exitCode = 1;
    return report;
  }
}

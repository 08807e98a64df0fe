import { AuditLog } from '../log.js';
import type { AuditInput } from '../types.js';

/** A realistic mix: start, an expose, call decisions with results, an egress line. */
export function sampleInput(i: number): AuditInput {
  switch (i % 4) {
    case 0:
      return { type: 'mcp.decision', refs: { phase: 'expose', server: 'docs', tool: `tool_${i}`, allowed: true, rule: 'pinned' } };
    case 1:
      return {
        type: 'mcp.decision',
        agent: 'ci-bot',
        scope: 'contractors',
        refs: { phase: 'call', server: 'github', tool: 'create_issue', allowed: i % 3 !== 0, rule: 'no-issues-on-prod', arguments: { repo: `example-corp/prod-${i}` } },
      };
    case 2:
      return { type: 'mcp.result', parentSeq: Math.max(1, i - 1), refs: { server: 'github', tool: 'create_issue', is_error: false, result: { content: [{ type: 'text', text: `ok ${i}` }] } } };
    default:
      return { type: 'mcp.egress', refs: { server: 'github', host: 'api.github.com', port: 443, allowed: true, reason: 'allowed by rule', status: 200 } };
  }
}

/** Writes a log of `count` entries (a gateway.start first). */
export async function writeSampleLog(path: string, count: number): Promise<void> {
  const log = await AuditLog.open({ path, session: 'sess-1' });
  await log.append({ type: 'gateway.start', refs: { pid: process.pid, version: '0.1.0' } });
  // Bursts share one write and flush (group commit) and keep call order, so seq = i + 1.
  for (let i = 1; i < count; i += 100) {
    const burst = Array.from({ length: Math.min(100, count - i) }, (_, k) => log.append(sampleInput(i + k)));
    const seqs = await Promise.all(burst);
    if (seqs.some((seq, k) => seq !== i + k + 1)) throw new Error('appends were not written in call order');
  }
  await log.close();
}

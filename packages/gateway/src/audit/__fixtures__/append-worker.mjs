// Appends COUNT entries to PATH from its own OS process, using the built library (dist), in
// bursts of concurrent appends, after the parent says "go" so that two workers overlap. With a
// fourth argument "flat-out" there is no pause between bursts (two gateways under full load).
import { AuditLog } from '../../../dist/audit/index.js';

const [path, countText, name, mode] = process.argv.slice(2);
const count = Number(countText);
const log = await AuditLog.open({ path, session: name });
process.send({ ready: true });
await new Promise((resolve) => process.once('message', resolve));
const seqs = [];
const started = performance.now();
for (let i = 0; i < count; i += 5) {
  const burst = [];
  for (let j = i; j < Math.min(count, i + 5); j++) {
    burst.push(
      log.append({
        type: 'mcp.decision',
        refs: { phase: 'call', server: name, tool: 'echo', allowed: true, rule: 'test', arguments: { j } },
      }),
    );
  }
  seqs.push(...(await Promise.all(burst)));
  // A short pause between bursts, as between calls in a real session, lets the other worker in.
  if (mode !== 'flat-out') await new Promise((resolve) => setTimeout(resolve, 2 + Math.random() * 8));
}
const ms = performance.now() - started;
await log.close();
process.send({ seqs, ms });
process.disconnect();

import type { EngineInfo } from '../runtime/engine.js';

/** The Docker Engine releases that fixed CVE-2024-29018, per release line. */
export const CVE_2024_29018_FIXED = ['26.0.2', '25.0.5', '23.0.11'] as const;

export type InternalDnsVerdict = 'affected' | 'fixed' | 'not-docker' | 'unknown';

/**
 * Whether this engine forwards DNS queries from `--internal` networks to a resolver on the host's
 * loopback (CVE-2024-29018): Docker before 23.0.11, every 24.x, 25.0.0–25.0.4 and 26.0.0–26.0.1.
 * Podman's resolver is another program and is not affected.
 */
export function internalDnsVerdict(info: Pick<EngineInfo, 'kind' | 'version'>): InternalDnsVerdict {
  if (info.kind !== 'docker') return 'not-docker';
  const match = /^v?(\d+)\.(\d+)\.(\d+)/.exec(info.version.trim());
  if (!match) return 'unknown';
  const version = match.slice(1).map(Number) as [number, number, number];
  const major = version[0];
  // 24.x got no fix; no release before 23 did either.
  if (major < 23 || major === 24) return 'affected';
  if (major > 26) return 'fixed';
  const fixedOnLine = CVE_2024_29018_FIXED.map((v) => v.split('.').map(Number)).find((v) => v[0] === major)!;
  const order = version[1] - fixedOnLine[1]! || version[2] - fixedOnLine[2]!;
  return order >= 0 ? 'fixed' : 'affected';
}

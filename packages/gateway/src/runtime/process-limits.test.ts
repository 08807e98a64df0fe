import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  containerProcessLimits,
  describeProcessLimits,
  hostHardLimitsFor,
  limitsRefusal,
  PROCESS_LIMIT_DEFAULTS,
  parseHardLimits,
  readHostHardLimits,
  ulimits,
} from './process-limits.js';

// /proc/self/limits as Linux writes it (a sandbox whose hard limits are below Podman's defaults).
const PROC_LIMITS = `Limit                     Soft Limit           Hard Limit           Units     
Max cpu time              unlimited            unlimited            seconds   
Max stack size            8388608              unlimited            bytes     
Max processes             96363                96363                processes 
Max open files            20000                20000                files     
Max locked memory         8388608              8388608              bytes     
Max pending signals       96363                96363                signals   
`;

describe('parseHardLimits', () => {
  it('reads the hard column of open files and processes, and nothing else', () => {
    expect(parseHardLimits(PROC_LIMITS)).toEqual({ nofile: 20000, nproc: 96363 });
  });

  it('reads unlimited as unlimited, and leaves out a row it cannot read', () => {
    const text = PROC_LIMITS.replace(/^(Max processes +\d+ +)\d+/m, '$1unlimited').replace(
      /^Max open files.*$/m,
      'Max open files            20000                lots                 files',
    );
    expect(parseHardLimits(text)).toEqual({ nproc: 'unlimited' });
    expect(parseHardLimits('')).toEqual({});
  });
});

describe('readHostHardLimits', () => {
  it('reads a limits file, and says nothing where there is none (not Linux)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rf-limits-'));
    writeFileSync(join(dir, 'limits'), PROC_LIMITS);
    expect(readHostHardLimits(join(dir, 'limits'))).toEqual({ nofile: 20000, nproc: 96363 });
    expect(readHostHardLimits(join(dir, 'missing'))).toBeUndefined();
  });
});

describe('containerProcessLimits', () => {
  it('gives the defaults where the host grants more, or has no limit', () => {
    expect(containerProcessLimits({ nofile: 20000, nproc: 96363 })).toEqual(PROCESS_LIMIT_DEFAULTS);
    expect(containerProcessLimits({ nofile: 'unlimited', nproc: 'unlimited' })).toEqual(
      PROCESS_LIMIT_DEFAULTS,
    );
  });

  it('lowers each to what the host grants where it grants less, soft never above hard', () => {
    expect(containerProcessLimits({ nofile: 2048, nproc: 512 })).toEqual({
      nofile: { soft: 1024, hard: 2048 },
      nproc: { soft: 512, hard: 512 },
    });
    expect(containerProcessLimits({ nofile: 800 })).toEqual({
      nofile: { soft: 800, hard: 800 },
      nproc: PROCESS_LIMIT_DEFAULTS.nproc,
    });
  });

  it('uses the defaults when the host limits are unknown (no /proc, a remote engine)', () => {
    expect(containerProcessLimits(undefined)).toEqual(PROCESS_LIMIT_DEFAULTS);
    expect(containerProcessLimits({})).toEqual(PROCESS_LIMIT_DEFAULTS);
  });

  it('every default fits within the kernel defaults any host grants (nofile 4096)', () => {
    expect(PROCESS_LIMIT_DEFAULTS.nofile.hard).toBeLessThanOrEqual(4096);
    expect(PROCESS_LIMIT_DEFAULTS.nproc.hard).toBeLessThanOrEqual(4096);
  });
});

describe('hostHardLimitsFor', () => {
  const read = () => ({ nofile: 100 });
  it("takes this process's limits for an engine on a Unix socket, none for a remote one", () => {
    expect(hostHardLimitsFor({ options: { socketPath: '/var/run/docker.sock' } }, read)).toEqual({
      nofile: 100,
    });
    expect(hostHardLimitsFor({ options: { host: 'build.example', port: 2376 } }, read)).toBeUndefined();
  });
});

describe('ulimits', () => {
  it('names both limits as the Engine API takes them', () => {
    const limits = containerProcessLimits({ nofile: 2048, nproc: 512 });
    expect(ulimits(limits)).toEqual([
      { Name: 'nofile', Soft: 1024, Hard: 2048 },
      { Name: 'nproc', Soft: 512, Hard: 512 },
    ]);
    expect(describeProcessLimits(limits)).toBe('nofile 1024:2048, nproc 512:512');
  });
});

describe('limitsRefusal', () => {
  const limits = containerProcessLimits(undefined);
  it("explains runc's and crun's refusal, with what to do, keeping what the engine said", () => {
    const runc = new Error(
      '(HTTP code 409) unexpected - preparing container 1a2b for attach: runc: runc create failed: unable to start container process: error during container init: error setting rlimits for ready process: error setting rlimit type 7: operation not permitted: OCI permission denied ',
    );
    expect(limitsRefusal(runc, limits)).toMatch(
      /^the engine may not give its container the process limits ringfence names \(nofile 1024:4096, nproc 4096:4096\): its own hard limits are lower\. Start the engine with hard limits at least that high .*then run: ringfence doctor\. The engine said: \(HTTP code 409\).*rlimit type 7: operation not permitted: OCI permission denied$/,
    );
    const crun = 'crun: setrlimit `RLIMIT_NOFILE`: Operation not permitted: OCI permission denied';
    expect(limitsRefusal(new Error(crun), limits)).toContain(crun);
  });

  it('leaves every other failure alone', () => {
    expect(limitsRefusal(new Error('no such image'), limits)).toBeUndefined();
  });
});

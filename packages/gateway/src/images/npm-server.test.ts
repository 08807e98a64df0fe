import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findInstalledPackage, parseNpmSpec, planNpmServerContext } from './npm-server.js';

let root: string;
const pkg = async (dir: string, manifest: Record<string, unknown>, files: Record<string, string> = {}) => {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'package.json'), JSON.stringify(manifest));
  for (const [name, content] of Object.entries(files)) await writeFile(join(dir, name), content);
};

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'rf-npm-'));
  await writeFile(join(root, '.env'), 'SECRET=1');
  await pkg(
    join(root, 'node_modules', '@acme', 'server'),
    { name: '@acme/server', version: '1.0.0', bin: { server: 'index.js' }, dependencies: { dep: '^1' } },
    { 'index.js': '' },
  );
  await pkg(join(root, 'node_modules', 'dep'), { name: 'dep', version: '1.2.3' }, { 'index.js': '' });
});
afterEach(() => rm(root, { recursive: true, force: true }));

const spec = parseNpmSpec('@acme/server@1.0.0');

describe('the npm server image context', () => {
  it('holds the package and its dependency closure under /app, plus a lock listing', () => {
    const installed = findInstalledPackage(spec, root);
    const context = planNpmServerContext(spec, installed, 'ringfence/node-base:x');
    expect(context.files.map((f) => f.path).sort()).toEqual([
      'app/node_modules/@acme/server/index.js',
      'app/node_modules/@acme/server/package.json',
      'app/node_modules/dep/index.js',
      'app/node_modules/dep/package.json',
      'app/ringfence-lock.json',
    ]);
    expect(context.dockerfile).toContain('ENTRYPOINT ["node","/app/node_modules/@acme/server/index.js"]');
    expect(context.dockerfile).toContain('USER 65532:65532');
  });

  it('refuses a dependency name that is a path (it would copy the project root, .env and all)', async () => {
    await pkg(
      join(root, 'node_modules', '@acme', 'server'),
      { name: '@acme/server', version: '1.0.0', bin: 'index.js', dependencies: { '../../..': '*' } },
      { 'index.js': '' },
    );
    expect(() => findInstalledPackage(spec, root)).toThrow(/not a valid npm package name/);
  });

  it('refuses a file that links outside its package (a key or .env pulled into the image)', async () => {
    await symlink(join(root, '.env'), join(root, 'node_modules', 'dep', 'readme.txt'));
    const installed = findInstalledPackage(spec, root);
    expect(() => planNpmServerContext(spec, installed, 'base')).toThrow(
      /outside its package; refusing to copy host files/,
    );
  });

  it('refuses a version other than the one installed, saying how to install it', () => {
    expect(() => findInstalledPackage(parseNpmSpec('@acme/server@2.0.0'), root)).toThrow(
      /1\.0\.0 is installed, not 2\.0\.0.*npm install @acme\/server@2\.0\.0/,
    );
  });
});

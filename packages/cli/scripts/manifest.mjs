// Writes oclif.manifest.json at build. Without it oclif imports every command module (and so the
// whole gateway) on each start, even for `--version`; with it only the command being run is loaded.
// This is what `oclif manifest` does, without the oclif dev tool's dependency tree.
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Plugin } from '@oclif/core';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const plugin = new Plugin({
  root,
  type: 'core',
  isRoot: true,
  ignoreManifest: true,
  errorOnManifestCreate: true,
  respectNoCacheDefault: true,
});
await plugin.load();
const { commands } = plugin.manifest;
if (Object.keys(commands).length === 0)
  throw new Error(`no commands found under ${root}/dist/commands: build first`);
await writeFile(join(root, 'oclif.manifest.json'), `${JSON.stringify(plugin.manifest, null, 2)}\n`);

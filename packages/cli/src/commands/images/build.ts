import { fileURLToPath } from 'node:url';
import { Flags } from '@oclif/core';
import { type BuiltImage, buildNodeBaseImage, buildSidecarImage } from '@ringfence/gateway/images';
import { RingfenceCommand } from '../../lib/base-command.js';
import { connectEngine } from '../../lib/engine.js';
import { formatBytes } from '../../lib/format.js';

export default class ImagesBuild extends RingfenceCommand {
  static override description =
    'Build the images ringfence needs from files on this machine, without any registry: a Node base image made from the local Node runtime (FROM scratch) and the egress-proxy sidecar on top of it. Tags are derived from the content; a second run builds nothing.';

  static override examples = ['<%= config.bin %> images build', '<%= config.bin %> images build --json'];

  static override enableJsonFlag = true;

  static override flags = {
    verbose: Flags.boolean({ char: 'v', description: "Show the engine's build output." }),
  };

  async run(): Promise<{ images: BuiltImage[] }> {
    const { flags } = await this.parse(ImagesBuild);
    const docker = await connectEngine();
    const onProgress =
      flags.verbose && !this.jsonEnabled() ? (line: string) => this.logToStderr(`  ${line}`) : undefined;
    const base = await buildNodeBaseImage(docker, onProgress ? { onProgress } : {});
    const bundlePath = fileURLToPath(import.meta.resolve('@ringfence/egress-proxy/bundle'));
    const sidecar = await buildSidecarImage(docker, {
      baseRef: base.ref,
      bundlePath,
      ...(onProgress ? { onProgress } : {}),
    });
    const images: BuiltImage[] = [base, sidecar];
    if (!this.jsonEnabled()) {
      for (const image of images) {
        const verb = image.built ? 'built  ' : 'present';
        this.log(`${verb}  ${image.ref}  ${image.id.slice(0, 19)}  ${formatBytes(image.sizeBytes)}`);
      }
    }
    return { images };
  }
}

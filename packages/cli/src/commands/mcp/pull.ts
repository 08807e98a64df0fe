import { Args, Command } from '@oclif/core';
import { buildNpmServerImage, parseNpmSpec, resolveHome, ServerStore } from '@ringfence/gateway';
import type Docker from 'dockerode';
import { connectEngine, ensureBaseImage } from '../../lib/engine.js';
import { checkRegistrationAgainstPolicy } from '../../lib/policy-checks.js';
import { loadPolicyView } from '../../lib/serving.js';

export default class McpPull extends Command {
  static override description =
    "Fetch a contained server's image and record its new image ID: the only way ringfence pulls. An image built from an npm package (--npm) is rebuilt from the package installed on this machine instead.";

  static override examples = ['<%= config.bin %> mcp pull github'];
  static override args = { name: Args.string({ required: true, description: 'server name' }) };

  async run(): Promise<void> {
    const { args } = await this.parse(McpPull);
    try {
      const home = resolveHome();
      const store = new ServerStore(home);
      const server = await store.get(args.name);
      if (server.transport !== 'container')
        throw new Error(`${args.name} is a remote server; there is nothing to pull.`);
      const policy = await loadPolicyView(home);
      const docker = await connectEngine();
      const current = await docker
        .getImage(server.image)
        .inspect()
        .catch(() => undefined);
      const npmPackage = current?.Config?.Labels?.['ringfence.npm-package'];
      let image = server.image;
      if (npmPackage) {
        image = (
          await buildNpmServerImage(docker, {
            spec: parseNpmSpec(npmPackage),
            from: process.cwd(),
            baseRef: await ensureBaseImage(docker),
          })
        ).ref;
      } else {
        this.log(`Pulling ${server.image}…`);
        await pull(docker, server.image);
      }
      const info = await docker.getImage(image).inspect();
      const updated = { ...server, image, image_id: info.Id };
      checkRegistrationAgainstPolicy(policy, updated, info);
      await store.replace(updated);
      this.log(
        info.Id === server.image_id
          ? `${args.name}: ${image} is unchanged (${info.Id.slice(0, 19)}).`
          : `${args.name}: recorded ${image} as ${info.Id.slice(0, 19)} (was ${server.image_id.slice(0, 19)}). Its tools are compared with the pins at the next start.`,
      );
    } catch (error) {
      this.error((error as Error).message, { exit: 1 });
    }
  }
}

function pull(docker: Docker, ref: string): Promise<void> {
  return new Promise((resolve, reject) => {
    docker.pull(ref, (error: Error | null, stream: NodeJS.ReadableStream) => {
      if (error) return reject(new Error(`Pulling ${ref} failed: ${error.message}`));
      docker.modem.followProgress(stream, (failure: Error | null) =>
        failure ? reject(new Error(`Pulling ${ref} failed: ${failure.message}`)) : resolve(),
      );
    });
  });
}

import { join } from 'node:path';
import { Args, Flags } from '@oclif/core';
import { CLIENT_KINDS, type ClientKind, FORMATS, type Launch } from '@ringfence/gateway/clients';

export const clientArg = Args.string({
  required: true,
  options: [...CLIENT_KINDS],
  description: `the client: ${CLIENT_KINDS.join(', ')}`,
});

export const configFlag = Flags.string({
  description:
    "the client's config file, when it is not where the client keeps it by default (any file in that client's format)",
  helpValue: 'PATH',
});

export const dryRunFlag = Flags.boolean({
  description: 'show what would change; register and write nothing',
});

/** The file used: --config, or the client's own (a project file in this folder first, if it has one). */
export function clientConfigPath(kind: ClientKind, config: string | undefined): string {
  return config ?? FORMATS[kind].defaultPath(process.cwd(), process.env, process.platform);
}

/** This ringfence, absolute: the running node and the CLI's bin/run.js. */
export function launchOf(root: string): Launch {
  return { command: process.execPath, args: [join(root, 'bin', 'run.js')] };
}

/** Said when the config is a symbolic link: the file it names is rewritten, the link stays. */
export function throughLink(result: { path: string; target: string }): string {
  return result.path === result.target
    ? ''
    : ` (a link: the file it names, ${result.target}, is rewritten; the link stays)`;
}

import { constants, existsSync } from 'node:fs';
import { copyFile, lstat, readFile, readlink, realpath, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { RingfenceError, writeFileAtomic } from '@ringfence/policy';

export type ClientErrorCode = 'CLIENT_UNKNOWN' | 'CLIENT_CONFIG' | 'CLIENT_CONFIG_LINK';

/** A client's config file could not be found, read or understood; nothing was changed. */
export class ClientError extends RingfenceError<ClientErrorCode> {}

export const CLIENT_KINDS = ['claude-desktop', 'claude-code', 'vscode', 'cursor'] as const;
export type ClientKind = (typeof CLIENT_KINDS)[number];

/**
 * How each client keeps its MCP servers, from their public docs: Claude Desktop, Claude Code and
 * Cursor under `mcpServers`, VS Code under `servers` (beside `inputs`). VS Code requires `type`
 * on every entry and Claude Code documents it (`stdio`, `http`, `sse`); the others infer it.
 */
interface ClientFormat {
  readonly key: 'mcpServers' | 'servers';
  readonly typed: boolean;
  /** The file used without --config: a project file when the folder has one, else the user's. */
  defaultPath(cwd: string, env: NodeJS.ProcessEnv, platform: NodeJS.Platform): string;
}

const appData = (env: NodeJS.ProcessEnv, platform: NodeJS.Platform, ...parts: string[]) =>
  platform === 'darwin'
    ? join(homedir(), 'Library', 'Application Support', ...parts)
    : platform === 'win32'
      ? join(env.APPDATA ?? join(homedir(), 'AppData', 'Roaming'), ...parts)
      : join(env.XDG_CONFIG_HOME ?? join(homedir(), '.config'), ...parts);

const projectOr = (project: string, user: string) => (existsSync(project) ? project : user);

export const FORMATS: Record<ClientKind, ClientFormat> = {
  'claude-desktop': {
    key: 'mcpServers',
    typed: false,
    defaultPath: (_cwd, env, platform) => appData(env, platform, 'Claude', 'claude_desktop_config.json'),
  },
  'claude-code': {
    key: 'mcpServers',
    typed: true,
    defaultPath: (cwd) => projectOr(join(cwd, '.mcp.json'), join(homedir(), '.claude.json')),
  },
  vscode: {
    key: 'servers',
    typed: true,
    defaultPath: (cwd, env, platform) =>
      projectOr(join(cwd, '.vscode', 'mcp.json'), appData(env, platform, 'Code', 'User', 'mcp.json')),
  },
  cursor: {
    key: 'mcpServers',
    typed: false,
    defaultPath: (cwd) => projectOr(join(cwd, '.cursor', 'mcp.json'), join(homedir(), '.cursor', 'mcp.json')),
  },
};

export function clientKind(name: string): ClientKind {
  if ((CLIENT_KINDS as readonly string[]).includes(name)) return name as ClientKind;
  throw new ClientError(
    'CLIENT_UNKNOWN',
    `"${name}" is not a client ringfence knows (${CLIENT_KINDS.join(', ')}). For another client in one of these formats, give its file with --config PATH.`,
  );
}

/** One entry of a client's server map, as the client wrote it. */
export type ClientEntry = Record<string, unknown>;

export interface ClientConfig {
  readonly kind: ClientKind;
  readonly path: string;
  /**
   * The file that is read, copied and rewritten: `path` itself, or, when `path` is a symbolic
   * link (or a chain of them), the file it names. The link is never replaced.
   */
  readonly target: string;
  /** The whole document; only its server map is ever changed. */
  readonly document: Record<string, unknown>;
  readonly servers: Record<string, ClientEntry>;
  readonly exists: boolean;
}

export async function readClientConfig(
  kind: ClientKind,
  path: string,
  options: { mustExist: boolean },
): Promise<ClientConfig> {
  const target = await configTarget(path);
  let text: string;
  try {
    text = await readFile(target, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' && !options.mustExist) {
      return { kind, path, target, document: {}, servers: {}, exists: false };
    }
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new ClientError(
        'CLIENT_CONFIG',
        `There is no ${kind} config at ${path}. If the client keeps it elsewhere, give it with --config PATH.`,
      );
    }
    throw error;
  }
  let document: unknown;
  try {
    document = text.trim() === '' ? {} : JSON.parse(text);
  } catch (error) {
    throw new ClientError(
      'CLIENT_CONFIG',
      `${path} is not plain JSON (${(error as Error).message}); ringfence does not rewrite files with comments or trailing commas. Remove them, or edit the file by hand with the entry ringfence client setup ${kind} --dry-run shows.`,
    );
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    throw new ClientError('CLIENT_CONFIG', `${path} is not a JSON object; it is not a ${kind} config.`);
  }
  const key = FORMATS[kind].key;
  const servers = (document as Record<string, unknown>)[key] ?? {};
  if (typeof servers !== 'object' || servers === null || Array.isArray(servers)) {
    throw new ClientError(
      'CLIENT_CONFIG',
      `"${key}" in ${path} is not an object of servers; nothing was changed.`,
    );
  }
  return {
    kind,
    path,
    target,
    document: document as Record<string, unknown>,
    servers: servers as Record<string, ClientEntry>,
    exists: true,
  };
}

/**
 * The file a config path stands for. A client config is often a symbolic link into a dotfiles
 * folder: writing a new file over the link would leave the folder's file (which other machines
 * or profiles read) with its old, uncontained entries. So a link, or a chain of them, is
 * followed to the file it names, which is what is copied and rewritten. A link to nothing, a
 * loop, a link to something other than a file, and a file with other hard links (replacing it
 * would leave them with the old entries) are refused with the reason.
 */
export async function configTarget(path: string): Promise<string> {
  const link = await lstat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (!link) return path;
  let target = path;
  if (link.isSymbolicLink()) {
    try {
      target = await realpath(path);
    } catch (error) {
      const names = await readlink(path).catch(() => '?');
      throw new ClientError(
        'CLIENT_CONFIG_LINK',
        `${path} is a symbolic link to ${names}, which ${(error as NodeJS.ErrnoException).code === 'ELOOP' ? 'loops back on itself' : 'does not exist'}. ringfence writes a linked config through to the file it names and never replaces the link; nothing was changed. Create that file (or fix the link), or give the file itself with --config PATH.`,
      );
    }
  }
  const info = await stat(target);
  if (!info.isFile())
    throw new ClientError(
      'CLIENT_CONFIG_LINK',
      `${path}${target === path ? '' : ` (a link to ${target})`} is not a file; nothing was changed. Give the client's config file with --config PATH.`,
    );
  if (info.nlink > 1)
    throw new ClientError(
      'CLIENT_CONFIG_LINK',
      `${target} has ${info.nlink} names (hard links): rewriting it would leave the others with the old entries; nothing was changed. Make it one file (or a symbolic link), or edit it by hand with the entry ringfence client setup --dry-run shows.`,
    );
  return target;
}

/** A copy of the file beside it (beside the file a link names), as it was, under a name that says when and why. */
export async function backupClientConfig(config: ClientConfig, now: Date = new Date()): Promise<string> {
  const backup = `${config.target}.ringfence-backup-${now.toISOString().replace(/[:.]/g, '-')}`;
  // Never over something already there (a file or a link planted under that name).
  await copyFile(config.target, backup, constants.COPYFILE_EXCL);
  return backup;
}

/**
 * Write the document with a new server map, atomically, to the file itself (through a link,
 * never over it). An existing file keeps its mode (a client config often holds tokens); a new
 * one is 0600. The target is checked once more just before: a link made or changed since the
 * file was read is refused rather than replaced.
 */
export async function writeClientConfig(
  config: ClientConfig,
  servers: Record<string, ClientEntry>,
): Promise<void> {
  if ((await configTarget(config.path)) !== config.target)
    throw new ClientError(
      'CLIENT_CONFIG_LINK',
      `${config.path} changed into another file while ringfence was reading it; nothing was changed. Run the command again.`,
    );
  const mode = config.exists ? (await stat(config.target)).mode & 0o777 : 0o600;
  const document = { ...config.document, [FORMATS[config.kind].key]: servers };
  await writeFileAtomic(config.target, `${JSON.stringify(document, null, 2)}\n`, { mode, dirMode: 0o700 });
}

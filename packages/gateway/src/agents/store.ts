import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { RingfenceError } from '@ringfence/policy';
import { expectObject, expectOnlyKeys, JsonStore, StoreError } from '../store/json-store.js';

export class AgentError extends RingfenceError<
  'AGENT_NAME' | 'AGENT_EXISTS' | 'AGENT_UNKNOWN' | 'AGENT_SCOPE' | 'AGENT_TOKEN'
> {}

export const AGENT_NAME = /^[a-z0-9][a-z0-9-]{0,31}$/;
export const AGENT_SCOPE = /^[a-z0-9][a-z0-9._-]{0,63}$/;

export interface AgentRecord {
  readonly name: string;
  readonly scope: string;
  /** `sha256:` + hex of the token; the token itself is never stored. */
  readonly token_sha256: string;
  readonly created_at: string;
}

interface AgentsFile {
  version: 1;
  agents: AgentRecord[];
}

function parseAgentsFile(value: unknown): AgentsFile {
  const file = expectObject(value, 'agents.json');
  expectOnlyKeys(file, ['version', 'agents'], 'agents.json');
  if (file.version !== 1)
    throw new StoreError('STORE_SHAPE', `version ${String(file.version)} is not supported (expected 1)`);
  if (!Array.isArray(file.agents)) throw new StoreError('STORE_SHAPE', 'agents must be a list');
  for (const [i, raw] of file.agents.entries()) {
    const agent = expectObject(raw, `agents[${i}]`);
    expectOnlyKeys(agent, ['name', 'scope', 'token_sha256', 'created_at'], `agents[${i}]`);
    if (typeof agent.name !== 'string' || !AGENT_NAME.test(agent.name))
      throw new StoreError('STORE_SHAPE', `agents[${i}].name is invalid`);
    if (typeof agent.scope !== 'string' || !AGENT_SCOPE.test(agent.scope))
      throw new StoreError('STORE_SHAPE', `agents[${i}].scope is invalid`);
    if (typeof agent.token_sha256 !== 'string' || !/^sha256:[0-9a-f]{64}$/.test(agent.token_sha256)) {
      throw new StoreError('STORE_SHAPE', `agents[${i}].token_sha256 is malformed`);
    }
  }
  return file as unknown as AgentsFile;
}

const hashToken = (token: string) => createHash('sha256').update(token).digest();

/** `agents.json`: agent names, scopes and the SHA-256 of their tokens (never the tokens). */
export class AgentStore {
  private readonly store: JsonStore<AgentsFile>;

  constructor(home: string) {
    this.store = new JsonStore(home, 'agents.json', parseAgentsFile, () => ({ version: 1, agents: [] }));
  }

  async list(): Promise<AgentRecord[]> {
    return (await this.store.read()).agents;
  }

  /** Create an agent; returns its token, which exists nowhere else afterwards. */
  async add(name: string, scope: string, now = new Date().toISOString()): Promise<string> {
    if (!AGENT_NAME.test(name)) {
      throw new AgentError(
        'AGENT_NAME',
        `"${name}" is not a valid agent name: 1-32 characters, lower-case letters, digits and "-".`,
      );
    }
    if (!AGENT_SCOPE.test(scope)) {
      throw new AgentError(
        'AGENT_SCOPE',
        `"${scope}" is not a valid scope: 1-64 characters, lower-case letters, digits, ".", "_" and "-".`,
      );
    }
    const token = `rfa_${randomBytes(32).toString('base64url')}`;
    await this.store.update((file) => {
      if (file.agents.some((a) => a.name === name)) {
        throw new AgentError(
          'AGENT_EXISTS',
          `An agent named "${name}" exists. Remove it first with: ringfence agent rm ${name}`,
        );
      }
      file.agents.push({
        name,
        scope,
        token_sha256: `sha256:${hashToken(token).toString('hex')}`,
        created_at: now,
      });
    });
    return token;
  }

  async remove(name: string): Promise<void> {
    await this.store.update((file) => {
      const index = file.agents.findIndex((a) => a.name === name);
      if (index < 0)
        throw new AgentError('AGENT_UNKNOWN', `No agent named "${name}". See them with: ringfence agent ls`);
      file.agents.splice(index, 1);
    });
  }

  /**
   * The agent a token belongs to, compared in constant time against every stored hash (so the
   * time taken does not say which agent, or how much of a hash, matched).
   */
  async resolve(token: string): Promise<AgentRecord | undefined> {
    const presented = hashToken(token);
    let found: AgentRecord | undefined;
    for (const agent of await this.list()) {
      const stored = Buffer.from(agent.token_sha256.slice('sha256:'.length), 'hex');
      if (timingSafeEqual(stored, presented) && !found) found = agent;
    }
    return found;
  }
}

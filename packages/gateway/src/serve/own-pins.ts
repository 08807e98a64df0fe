import { fingerprintDefinition } from '../pins/fingerprint.js';
import { emptyServerPins, type PinStore, type PinsFile } from '../pins/store.js';

/**
 * The pins of ringfence's own server: its definitions as this build ships them, pinned in memory
 * and never written to the home's pin file. They need no first-sight trust from anyone (ringfence
 * wrote them), an upgrade that rewords them withholds nothing, and a listing that differed from
 * them (it cannot: they are the same objects) would be withheld like any server's change. An
 * organisation policy that pins `ringfence` still decides, as for any server.
 */
export function builtInPins(server: string, tools: readonly unknown[]): PinStore {
  const pins = emptyServerPins();
  const now = new Date().toISOString();
  for (const raw of tools) {
    const result = fingerprintDefinition(raw, 'tool');
    if (result.ok)
      pins.tools[result.pinnable.name] = {
        digest: result.pinnable.digest,
        definition: result.pinnable.definition,
        pinned_at: now,
      };
  }
  let file: PinsFile = { version: 1, servers: { [server]: pins } };
  return {
    path: '(built into ringfence)',
    read: async () => structuredClone(file),
    server: async (name: string) => structuredClone(file.servers[name]),
    update: async <R>(change: (current: PinsFile) => R | Promise<R>) => {
      const next = structuredClone(file);
      const result = await change(next);
      file = next;
      return result;
    },
  } as unknown as PinStore;
}

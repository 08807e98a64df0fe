import { spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { track } from './processes.js';

export interface SessionKeyring {
  /** DBUS_SESSION_BUS_ADDRESS of the private session bus the keyring answers on. */
  readonly address: string;
}

/**
 * A private D-Bus session bus with Debian's gnome-keyring answering the Secret Service on it,
 * its login keyring created and unlocked with a password fed on stdin (no prompt, no desktop).
 * Both daemons are tracked: `stopAll` ends them by pid. Needs `dbus-daemon` and
 * `gnome-keyring-daemon` (scripts/ensure-keyring installs them).
 */
export async function startSessionKeyring(): Promise<SessionKeyring> {
  const bus = track(
    spawn('dbus-daemon', ['--session', '--nofork', '--print-address=1'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  const address = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('dbus-daemon printed no address in 10 s')), 10_000);
    bus.once('error', (error) =>
      reject(new Error(`dbus-daemon did not start (${error.message}); run scripts/ensure-keyring`)),
    );
    createInterface({ input: bus.stdout! }).once('line', (line) => {
      clearTimeout(timer);
      resolve(line.trim());
    });
  });
  const keyringHome = await mkdtemp(join(tmpdir(), 'rf-keyring-home-'));
  const daemon = track(
    spawn('gnome-keyring-daemon', ['--foreground', '--unlock', '--components=secrets'], {
      env: {
        ...process.env,
        DBUS_SESSION_BUS_ADDRESS: address,
        HOME: keyringHome,
        XDG_DATA_HOME: join(keyringHome, 'data'),
      },
      stdio: ['pipe', 'ignore', 'pipe'],
    }),
  );
  await new Promise<void>((resolve, reject) => {
    daemon.once('error', (error) =>
      reject(new Error(`gnome-keyring-daemon did not start (${error.message}); run scripts/ensure-keyring`)),
    );
    daemon.once('spawn', () => resolve());
  });
  // --unlock reads the login keyring's password from stdin (creating the keyring with it).
  daemon.stdin!.end('e2e-keyring-password\n');
  return { address };
}

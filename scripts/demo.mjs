#!/usr/bin/env node
// `npm run demo`: the main job on the built-in example, from a fresh clone.
// Installs and builds when needed, makes sure a container engine answers, builds the offline
// images, checks the machine, then runs a scripted client session (scripts/demo-session.mjs). Every step says what it does; a failing step stops the demo
// with the command that fixes it.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(repo, 'packages/cli/bin/run.js');

function step(title, command, args, { optional = false } = {}) {
  process.stderr.write(`\n== ${title}\n$ ${[command, ...args].join(' ')}\n`);
  const result = spawnSync(command, args, {
    cwd: repo,
    stdio: 'inherit',
    env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1' },
  });
  if (result.status !== 0 && !optional) {
    process.stderr.write(
      `\ndemo: "${title}" failed (exit ${result.status}). Fix what it printed above and run npm run demo again.\n`,
    );
    process.exit(result.status ?? 1);
  }
  return result.status;
}

if (!existsSync(join(repo, 'node_modules/.package-lock.json')))
  step('Install dependencies', 'npm', ['ci', '--no-audit', '--no-fund']);
step('Build every package', 'npm', ['run', 'build']);
step('Make sure a container engine answers', join(repo, 'scripts/ensure-engine'), []);
// Not needed by the demo itself, but by `npm test`, which the README runs next (its console test
// drives a browser): preparing it here means nothing is installed by hand. A machine where it
// cannot be installed still gets the demo, and is told at the end what npm test will need.
const browser = step(
  'Make sure the browser npm test drives is installed (Debian chromium)',
  join(repo, 'scripts/ensure-browser'),
  [],
  { optional: true },
);
// The same for the keyring npm test's credential-store test talks to (a private D-Bus session
// with Debian's gnome-keyring).
const keyring = step(
  'Make sure the keyring npm test talks to is installed (Debian dbus-daemon and gnome-keyring)',
  join(repo, 'scripts/ensure-keyring'),
  [],
  { optional: true },
);
const registry = step(
  'Make sure the registry npm test pulls through is installed (Debian docker-registry, run on 127.0.0.1 by the test)',
  join(repo, 'scripts/ensure-registry'),
  [],
  { optional: true },
);
// And Debian's prometheus, which npm test's metrics test scrapes the gateway with.
const prometheus = step(
  'Make sure the prometheus npm test scrapes with is installed (Debian prometheus)',
  join(repo, 'scripts/ensure-prometheus'),
  [],
  { optional: true },
);
// The same for the audit export's test: Debian's rsyslogd (and its TLS driver), which the test
// starts itself with a private configuration on a loopback port.
const rsyslog = step(
  'Make sure the syslog collector npm test sends to is installed (Debian rsyslog, rsyslog-gnutls)',
  join(repo, 'scripts/ensure-rsyslog'),
  [],
  { optional: true },
);
step('Build the offline images (no registry)', process.execPath, [cli, 'images', 'build']);
step('Check this machine', process.execPath, [cli, 'doctor']);
step('Run the scripted session: containers, pins, egress, audit', process.execPath, [
  join(repo, 'scripts/demo-session.mjs'),
]);
process.stderr.write('\ndemo: done. Next: npm test, and README.md and docs/ for what each command does.\n');
if (browser !== 0)
  process.stderr.write(
    'demo: npm test needs a browser this demo could not install (see "ensure-browser" above): run scripts/ensure-browser as root, or do what it said, first.\n',
  );
if (registry !== 0)
  process.stderr.write(
    'demo: npm test needs docker-registry, which this demo could not install (see "ensure-registry" above): run scripts/ensure-registry as root, or do what it said, first.\n',
  );
if (rsyslog !== 0)
  process.stderr.write(
    'demo: npm test needs rsyslogd and rsyslog-gnutls, which this demo could not install (see "ensure-rsyslog" above): run scripts/ensure-rsyslog as root, or do what it said, first.\n',
  );
if (keyring !== 0)
  process.stderr.write(
    'demo: npm test needs dbus-daemon and gnome-keyring, which this demo could not install (see "ensure-keyring" above): run scripts/ensure-keyring as root, or do what it said, first.\n',
  );
if (prometheus !== 0)
  process.stderr.write(
    'demo: npm test needs prometheus, which this demo could not install (see "ensure-prometheus" above): run scripts/ensure-prometheus as root, or do what it said, first.\n',
  );

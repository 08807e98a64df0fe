#!/usr/bin/env node
import { main } from './main.js';

main(process.argv.slice(2)).then(
  (code) => {
    // Exit explicitly: open tunnels and the lifeline stream must not keep a stopped proxy alive.
    process.stdout.write('', () => process.exit(code));
  },
  (err: unknown) => {
    process.stderr.write(
      `ringfence-egress-proxy: unexpected failure: ${(err as Error)?.stack ?? String(err)}\n`,
    );
    process.exit(1);
  },
);

import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    // Schema workers start real threads and the audit tests real processes; a loaded machine
    // (CI, or other work beside it) must not turn that into a timeout.
    testTimeout: 30_000,
  },
});

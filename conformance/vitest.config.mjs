import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.mjs'],
    // Real processes (the fixture, the gateway) on a shared 2-core machine: generous, never a
    // measure of speed.
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});

import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['e2e/**/*.test.ts'],
    globalSetup: ['./helpers/global-setup.ts'],
    // Real containers on a 2-core machine: generous, and never a measure of speed.
    testTimeout: 180_000,
    hookTimeout: 300_000,
    fileParallelism: false,
  },
});

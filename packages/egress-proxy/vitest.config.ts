import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    globalSetup: ['./src/__fixtures__/global-setup.ts'],
    // Two shared cores: files run one at a time, and timeouts leave room for a slow machine.
    fileParallelism: false,
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});

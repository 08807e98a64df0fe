import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // oclif writes through console.log; @oclif/test captures process.stdout, so vitest must not intercept.
    disableConsoleIntercept: true,
    include: ['src/**/*.test.ts'],
    testTimeout: 30_000,
  },
});

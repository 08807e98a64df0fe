import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    // Property tests verify hundreds of signatures and the lock tests start real processes;
    // a loaded CI machine must not turn that into a timeout.
    testTimeout: 30_000,
  },
});

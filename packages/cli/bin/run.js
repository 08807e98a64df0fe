#!/usr/bin/env node
// Refusals carry digests, paths and commands meant to be copied: oclif must not wrap them.
// (The terminal still soft-wraps long lines for reading.)
process.env.OCLIF_COLUMNS ??= '1000';
const { execute } = await import('@oclif/core');

await execute({ dir: import.meta.url });

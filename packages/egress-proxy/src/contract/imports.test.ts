import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const here = dirname(fileURLToPath(import.meta.url));
const sources = readdirSync(here).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'));

/** Every module specifier a file names: static imports, re-exports and dynamic imports. */
function specifiers(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/\b(?:import|export)\b[^'";]*?\bfrom\s*['"]([^'"]+)['"]/g))
    found.push(m[1] ?? '');
  for (const m of text.matchAll(/\bimport\s*(?:\(\s*)?['"]([^'"]+)['"]/g)) found.push(m[1] ?? '');
  return found;
}

describe('the contract entry point', () => {
  it('has the files it is expected to have', () => {
    expect(sources).toContain('index.ts');
    expect(sources.length).toBeGreaterThanOrEqual(8);
  });

  it.each(sources)('%s imports only node built-ins and files beside it', (file) => {
    const names = specifiers(readFileSync(join(here, file), 'utf8'));
    for (const name of names) {
      if (name.startsWith('node:')) {
        expect(builtinModules).toContain(name.slice('node:'.length));
      } else {
        expect(name).toMatch(/^\.\/[a-z-]+\.js$/);
        expect(sources).toContain(name.slice(2).replace(/\.js$/, '.ts'));
      }
    }
  });

  it('the scanner sees the imports it must refuse', () => {
    const names = specifiers(
      "import { x } from '../proxy.js';\nexport { y } from 'esbuild';\nimport type { Z } from \"../errors.js\";\nconst m = await import('node:http');",
    );
    expect(names).toEqual(['../proxy.js', 'esbuild', '../errors.js', 'node:http']);
  });
});

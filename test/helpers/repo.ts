// Paths in the repository, the same whether a test runs as TypeScript (test/, `npx tap test/unit/foo.test.ts`) or
// compiled by tsconfig.test.json (dist/test/, as run-all.sh runs them): a path relative to import.meta.url would
// differ by the dist/ level.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root directory as a file: URL, with a trailing slash. */
export const ROOT_URL = new URL(/\/dist\/test\/helpers\/[^/]+$/.test(import.meta.url) ? '../../../' : '../../', import.meta.url);

/** The repository's root directory, with a trailing slash. */
export const ROOT = fileURLToPath(ROOT_URL);

/** An absolute path from the repository's root: repoPath('test/fixtures/query/entities.json'). */
export const repoPath = (...parts: string[]): string => join(ROOT, ...parts);

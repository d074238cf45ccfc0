// undici (HTTP client) required on first use, not at a thread's start: its entry loads every part of the library
// (~110 ms of CPU in a fresh thread), and most threads never send a notification or fetch an @context or a source.
import { createRequire } from 'node:module';

type Undici = typeof import('undici');

const require = createRequire(import.meta.url);
let lib: Undici | undefined;

/** The undici module; the first call loads it synchronously, so concurrent first users all get the same one. */
export function undici(): Undici {
  return (lib ??= require('undici') as Undici);
}

// Index format 5 (index-rebuild.ts): rewrites the entity and document keys an older store wrote as strings joined
// with NUL into the array keys of keys.ts, in bounded transactions, so tenant ranges see every key.
import { asBinary, type Database, type Key, type RootDatabase } from 'lmdb';
import type { PluginLogger } from '../../../plugin/contract.js';

/** Keys moved per write transaction: bounded so a large store never holds one huge transaction. */
const CHUNK = 10_000;
/** A progress line every this many keys. */
const PROGRESS_EVERY = 50_000;

/**
 * Moves every key of `db` written as `part NUL part ...` to the array `[part, part, ...]`, its value copied as stored
 * bytes. Only such a key shorter than 64 characters needs it: ordered-binary wrote it with each NUL escaped as 4 0,
 * and reads it back as a string. A longer one was written as plain UTF-8 with a bare 0 between the parts, the very
 * bytes of the array (keys.ts), and reads back as an array already. Each moved key lands before the one it replaces
 * (0 sorts before 4 at the first separator), so the forward scan never meets a key twice. Returns the keys moved.
 */
export function migrateJoinedKeys(env: RootDatabase, db: Database<unknown, Key>, parts: number, log: PluginLogger, what: string): number {
  const started = Date.now();
  let moved = 0;
  let announced = false;
  let after: string | undefined;
  for (;;) {
    const chunk: string[] = [];
    for (const key of db.getKeys(after === undefined ? {} : { start: after })) {
      if (typeof key !== 'string' || key.indexOf('\u0000') < 0 || key === after) continue;
      chunk.push(key);
      if (chunk.length === CHUNK) break;
    }
    if (chunk.length === 0) break;
    if (!announced) log.info({ database: what }, 'embdb: rewriting keys joined with NUL as array keys (index format 5)');
    announced = true;
    const before = moved;
    env.transactionSync(() => {
      for (const key of chunk) {
        const raw = db.getBinary(key);
        if (raw === undefined) continue;
        const split = key.split('\u0000');
        // A key of another shape than this database's is not ours to guess at: it stays where it is.
        if (split.length !== parts) continue;
        db.putSync(split, asBinary(raw));
        db.removeSync(key);
        moved++;
      }
    });
    after = chunk[chunk.length - 1];
    if (Math.floor(moved / PROGRESS_EVERY) > Math.floor(before / PROGRESS_EVERY))
      log.info({ database: what, keys: moved, ms: Date.now() - started }, 'embdb: key rewrite progress');
  }
  if (moved > 0) log.info({ database: what, keys: moved, ms: Date.now() - started }, 'embdb: keys rewritten');
  return moved;
}

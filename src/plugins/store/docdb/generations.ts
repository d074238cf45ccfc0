// The generations of docdb's document collections (store/contract.ts DocCollection.generation): exact among the
// threads of one broker (a counter per collection in a SharedArrayBuffer the primary hands every thread's store), and
// within CROSS_BROKER_MS of a change by another broker of the set (a token per collection, read again by a thread at
// most every CHECK_MS while it is asked for the generation).
import { randomBytes } from 'node:crypto';

/** Counters of the buffer: collections share them by a hash of tenant and name (a shared one only moves more often). */
const SLOTS = 4096;
/** Period of a thread's reads of a collection's change token, while requests ask for its generation. */
export const CHECK_MS = 500;
/**
 * Longest time a change by another broker of the set goes unseen: a token read vouches for the last listing this long
 * (two periods: a read due is sent by a request, which is still answered from the last one); past it, with no newer
 * read (an idle thread, a server that does not answer), the generation is one never seen, and the reader lists again.
 */
export const CROSS_BROKER_MS = 2 * CHECK_MS;
/** Most collections a thread watches (tenants are as many as clients name); past it the map starts over. */
const MAX_WATCHED = 1024;

/** The buffer the primary makes once (storePrepare), for the store of every thread of the broker. */
export function generationBuffer(): SharedArrayBuffer {
  return new SharedArrayBuffer(SLOTS * Uint32Array.BYTES_PER_ELEMENT);
}

/** What a thread knows of one collection's token: undefined before its first read, null while none was written. */
interface Watched {
  slot: number;
  token: string | null | undefined;
  /** When the last read that answered was sent (ms). */
  checkedAt: number;
  checking: boolean;
}

/** Reads a collection's change token from the server (null: none yet). */
export type TokenReader = (tenant: string, name: string) => Promise<string | null>;

export class Generations {
  private readonly counters: Uint32Array;
  private readonly watched = new Map<string, Watched>();
  private readonly tokenPrefix = randomBytes(6).toString('base64url');
  private tokensMade = 0;
  /** Numbers of a generation no read vouches for: above every counter (a Uint32), never the same twice. */
  private unvouched = 2 ** 32;

  constructor(
    buffer: SharedArrayBuffer,
    private readonly readToken: TokenReader,
  ) {
    this.counters = new Uint32Array(buffer);
  }

  /** After a write of the collection landed: the next request on any thread of this broker lists it again. */
  moved(tenant: string, name: string): void {
    Atomics.add(this.counters, slotOf(tenant, name), 1);
  }

  /**
   * A token no broker wrote before (a random prefix per store instance), for the token document: any write of it
   * after a reader's read leaves another value than the one read, even where the server applies concurrent updates
   * of one document as reads and writes that can overwrite each other (FerretDB 1.x, docdb-store.ts bumpDoc).
   */
  newToken(): string {
    return `${this.tokenPrefix}.${++this.tokensMade}`;
  }

  /** The collection's generation as DocCollection.generation has it; starts a read of its token when one is due. */
  current(tenant: string, name: string, now = Date.now()): number {
    const key = tenant + '\u0000' + name;
    let w = this.watched.get(key);
    if (w === undefined) {
      if (this.watched.size >= MAX_WATCHED) this.watched.clear();
      w = { slot: slotOf(tenant, name), token: undefined, checkedAt: -Infinity, checking: false };
      this.watched.set(key, w);
    }
    const age = now - w.checkedAt;
    if (age >= CHECK_MS && !w.checking) this.check(tenant, name, w, now);
    if (age >= CROSS_BROKER_MS) return this.unvouched++;
    return Atomics.load(this.counters, w.slot);
  }

  private check(tenant: string, name: string, w: Watched, sentAt: number): void {
    w.checking = true;
    this.readToken(tenant, name).then(
      (token) => {
        // Another broker wrote since the last read: every thread here lists again (each also sees it at its own read).
        if (w.token !== undefined && token !== w.token) Atomics.add(this.counters, w.slot, 1);
        w.token = token;
        w.checkedAt = sentAt;
        w.checking = false;
      },
      () => {
        // No answer: nothing vouched for, the readers list again past CROSS_BROKER_MS (and meet the failure there).
        w.checking = false;
      },
    );
  }
}

/** FNV-1a of tenant, NUL, name, onto the counters. */
function slotOf(tenant: string, name: string): number {
  let h = 0x811c9dc5;
  const s = tenant + '\u0000' + name;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return (h >>> 0) % SLOTS;
}

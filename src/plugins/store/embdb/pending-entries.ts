// Index entries a single write moves, noted while the write is computed and written once nothing can fail any more
// (embdb-store.ts applyOutcome): a single write runs without a child transaction of its own, so whatever can throw
// must do so before its first put.

/** What moving an index's entries calls: an lmdb database, or PendingEntries to write them later. */
export interface IndexWriter<K, V = string> {
  putSync(key: K, value: V): unknown;
  removeSync(key: K, value: V): unknown;
}

/** The entries one write removes and puts, in their order; reused from write to write (cleared first). */
export class PendingEntries<K, V = string> implements IndexWriter<K, V> {
  private readonly keys: K[] = [];
  private readonly ids: V[] = [];
  private readonly puts: boolean[] = [];

  clear(): this {
    // Most writes move no entry: setting an array's length costs more than reading it.
    if (this.keys.length === 0) return this;
    this.keys.length = 0;
    this.ids.length = 0;
    this.puts.length = 0;
    return this;
  }

  putSync(key: K, id: V): boolean {
    this.note(key, id, true);
    return true;
  }

  removeSync(key: K, id: V): boolean {
    this.note(key, id, false);
    return true;
  }

  /** Inside the write transaction: every noted entry, in order. */
  writeTo(db: IndexWriter<K, V>): void {
    for (let i = 0; i < this.keys.length; i++) {
      if (this.puts[i]) db.putSync(this.keys[i]!, this.ids[i]!);
      else db.removeSync(this.keys[i]!, this.ids[i]!);
    }
    this.clear();
  }

  private note(key: K, id: V, put: boolean): void {
    this.keys.push(key);
    this.ids.push(id);
    this.puts.push(put);
  }
}

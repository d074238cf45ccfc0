// The policies of the policy API (seed 000 §4.1 rule 1): documents `{odrl:uid, odrl}` in the default tenant's
// collection `odrlPolicies` of the broker's store, keyed by a ten-letter id, listed in creation order.
import { randomInt } from 'node:crypto';
import type { DocCollection } from '../store/contract.js';
import type { PolicyBody } from './policy-body.js';
import { conflict } from './problem.js';

export const POLICY_COLLECTION = 'odrlPolicies';

/** One policy as the API shows it: a listing entry of the PAP (seed 000 §2.9). */
export interface PolicyEntry {
  id: string;
  'odrl:uid': string;
  odrl: string;
}

const ID_LENGTH = 10;
const LETTERS = 'abcdefghijklmnopqrstuvwxyz';
const ID_PATTERN = /^[A-Za-z]{10}$/;

/** seed 000 §8: a policy id is ten letters. */
export function isPolicyId(text: string): boolean {
  return ID_PATTERN.test(text);
}

function newPolicyId(): string {
  let id = '';
  for (let i = 0; i < ID_LENGTH; i++) id += LETTERS[randomInt(LETTERS.length)];
  return id;
}

/**
 * Uniqueness of `odrl:uid` (seed 000 §4.1 rule 4) without a unique index in the store contract: the policy API
 * runs on the main thread only, so one event loop sees every write of this broker. Writes go through one promise
 * queue, and each checks and updates an in-memory uid → id index (built from the collection at start) only
 * inside its turn of the queue, so two concurrent POSTs of one uid are decided one after the other: the first
 * stores, the second finds the uid taken (409). Reads are not queued. Brokers sharing a docdb store do not see
 * each other's index; write policies through one of them.
 */
export class PolicyBook {
  private readonly idOfUid = new Map<string, string>();
  private tail: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly docs: DocCollection,
    /** Other brokers write the same collection (docdb): the uid index is read again before each use of it. */
    private readonly shared: boolean,
  ) {}

  static async open(docs: DocCollection, shared = false): Promise<PolicyBook> {
    const book = new PolicyBook(docs, shared);
    await book.readIndex();
    return book;
  }

  private async readIndex(): Promise<void> {
    this.idOfUid.clear();
    for (const { id, doc } of await this.docs.list()) {
      const uid = doc['odrl:uid'];
      if (typeof uid === 'string' && !this.idOfUid.has(uid)) this.idOfUid.set(uid, id);
    }
  }

  /** On a shared store, the index as the store has it now (a policy another broker created, replaced or deleted). */
  private async current(): Promise<void> {
    if (this.shared) await this.readIndex();
  }

  get size(): number {
    return this.idOfUid.size;
  }

  async list(offset: number, limit: number): Promise<PolicyEntry[]> {
    const out: PolicyEntry[] = [];
    for (const { id, doc } of await this.docs.list(offset, limit)) {
      const entry = entryOf(id, doc);
      if (entry !== undefined) out.push(entry);
    }
    return out;
  }

  async get(id: string): Promise<PolicyEntry | undefined> {
    const doc = await this.docs.get(id);
    return doc === undefined ? undefined : entryOf(id, doc);
  }

  async getByUid(uid: string): Promise<PolicyEntry | undefined> {
    await this.current();
    const id = this.idOfUid.get(uid);
    return id === undefined ? undefined : this.get(id);
  }

  /** Stores a new policy under a new id; 409 when its uid is taken. */
  create(policy: PolicyBody): Promise<string> {
    return this.serial(async () => {
      await this.current();
      if (this.idOfUid.has(policy.uid)) throw conflict(`a policy with odrl:uid '${policy.uid}' exists already`);
      let id = newPolicyId();
      while (!(await this.docs.insert(id, docOf(policy)))) id = newPolicyId();
      this.idOfUid.set(policy.uid, id);
      return id;
    });
  }

  /** Creates or replaces the policy `id`; 409 when another policy has its uid. */
  put(id: string, policy: PolicyBody): Promise<void> {
    return this.serial(async () => {
      await this.current();
      const holder = this.idOfUid.get(policy.uid);
      if (holder !== undefined && holder !== id) throw conflict(`the policy '${holder}' has odrl:uid '${policy.uid}' already`);
      const previous = await this.docs.get(id);
      await this.docs.put(id, docOf(policy));
      const previousUid = previous?.['odrl:uid'];
      if (typeof previousUid === 'string' && this.idOfUid.get(previousUid) === id) this.idOfUid.delete(previousUid);
      this.idOfUid.set(policy.uid, id);
    });
  }

  delete(id: string): Promise<void> {
    return this.serial(async () => {
      const previous = await this.docs.get(id);
      if (previous === undefined) return;
      await this.docs.delete(id);
      const uid = previous['odrl:uid'];
      if (typeof uid === 'string' && this.idOfUid.get(uid) === id) this.idOfUid.delete(uid);
    });
  }

  deleteByUid(uid: string): Promise<void> {
    return this.serial(async () => {
      await this.current();
      const id = this.idOfUid.get(uid);
      if (id === undefined) return;
      await this.docs.delete(id);
      this.idOfUid.delete(uid);
    });
  }

  /** Resolves once every write queued so far is done (for shutdown). */
  async drain(): Promise<void> {
    await this.tail;
  }

  private serial<R>(write: () => Promise<R>): Promise<R> {
    const run = this.tail.then(write);
    this.tail = run.catch(() => undefined);
    return run;
  }
}

function docOf(policy: PolicyBody): Record<string, unknown> {
  return { 'odrl:uid': policy.uid, odrl: policy.text };
}

function entryOf(id: string, doc: Record<string, unknown>): PolicyEntry | undefined {
  const uid = doc['odrl:uid'];
  const odrl = doc['odrl'];
  return typeof uid === 'string' && typeof odrl === 'string' ? { id, 'odrl:uid': uid, odrl } : undefined;
}

// Subordinate subscriptions (CIM 009 v1.8.1 §4.3.6, §5.8 distributed behaviour), kept on the notifier thread: for each
// subscription whose selection meets a registration that offers createSubscription, a subscription on that source
// notifying this broker (ops/subordinate-notify.ts relays to the original subscriber). They follow the original
// (made, updated, deleted with it) and the registrations (made when one appears, deleted when it goes); a source
// that cannot be reached is tried again every RETRY_MS, never holding up the original.
// On a store several brokers share (docdb), the subscriptions, registrations and records are the set's: one broker
// of the set (set-owner.ts) keeps the subordinates of each original, the others leave them alone, and registrations
// are read from the store at each look (another broker may have made one) and every refresh.
import { createHash } from 'node:crypto';
import { BroadcastChannel } from 'node:worker_threads';
import { REGISTRATIONS_CHANNEL, channelName, type RegistrationChanged } from './channel.js';
import type { Store } from '../store/contract.js';
import type { Logger } from '../logger.js';
import type { ContextSource } from '../pipeline/worker-context.js';
import { sendToSource } from '../pipeline/source-http.js';
import { type SubscriptionDoc } from '../ngsild/subscription/model.js';
import { REGISTRATIONS, type RegistrationBody, type RegistrationDoc } from '../ngsild/subscription/registration.js';
import { SUBORDINATE_ID_PREFIX, isSubordinateId, subordinateBody, subordinateTargets } from '../ngsild/registration/subordinate.js';
import { registrationHeaders } from '../ngsild/registration/source-headers.js';
import { pathSegment } from '../ngsild/uri-encode.js';
import { API_PREFIX } from '../ngsild/operations.js';
import type { SetOwner } from './set-owner.js';

/** The collection (of the default tenant) of the subordinate subscriptions made, keyed by the key of their endpoint. */
export const SUBORDINATES = 'subordinateSubscriptions';
/** The route a source notifies (below API_PREFIX), the record's key after it. */
export const SUBORDINATE_NOTIFY_PATH = '/subordinateNotifications/';

/** One subordinate subscription: what it is made for, where, and whether the source has it. */
export interface SubordinateRecord {
  tenant: string;
  /** The original subscription's id. */
  original: string;
  registration: string;
  /** The registration's endpoint when it was made (a changed endpoint is a new source). */
  endpoint: string;
  /** Its id on the source. */
  sourceId: string;
  /** 'made': the source has it as of `syncedAt` (the original's modifiedAt); 'pending': to be made. */
  state: 'made' | 'pending';
  syncedAt?: string;
  /** The endpoint it notifies, as last made. */
  notifyUri?: string;
  error?: string;
}

const RETRY_MS = 5000;
const REQUEST_TIMEOUT_MS = 5000;

export class SubordinateSubscriptions {
  /** Runs one look at a time: a change never races the one before it. */
  private queue: Promise<void> = Promise.resolve();
  private retry: NodeJS.Timeout | undefined;
  private refresh: NodeJS.Timeout | undefined;
  private closed = false;
  /**
   * The subscriptions and registrations as their changes told them (per tenant, by id), not read again from the store:
   * a read on this thread may not see yet a write another thread has just made.
   */
  private readonly subs = new Map<string, Map<string, SubscriptionDoc>>();
  private readonly regs = new Map<string, Map<string, RegistrationBody>>();

  constructor(
    private readonly store: Store,
    private readonly contexts: ContextSource,
    private readonly log: Logger,
    /**
     * Where sources notify: --brokerUrl, else the address the original's request reached (SubscriptionDoc.brokerUrl),
     * else the configured one (`listenUrl`, undefined with `--port 0`).
     */
    private readonly brokerUrl: string | undefined,
    private readonly listenUrl: string | undefined,
    /** On a shared store: which originals this broker keeps the subordinates of. */
    private readonly owner?: SetOwner,
  ) {}

  /** A subscription was created, changed (or loaded at start), or deleted (null). */
  subscriptionChanged(tenant: string, id: string, doc: SubscriptionDoc | null): void {
    if (isSubordinateId(id)) return;
    let docs = this.subs.get(tenant);
    if (docs === undefined) this.subs.set(tenant, (docs = new Map()));
    if (doc === null) docs.delete(id);
    else docs.set(id, doc);
    this.run(() => this.syncSubscription(tenant, id));
  }

  /** A registration was created, changed or deleted: every subscription of its tenant is looked at again. */
  registrationChanged(change: RegistrationChanged): void {
    this.run(async () => {
      const regs = await this.registrationsOf(change.tenant);
      if (change.body === null) regs.delete(change.id);
      else regs.set(change.id, change.body);
      await this.syncTenant(change.tenant);
    });
  }

  /**
   * Once the subscriptions are loaded at start: the subordinates of originals deleted while the broker was down (or
   * whose delete it did not finish) are deleted on their sources too.
   */
  sweep(): void {
    this.run(async () => {
      const seen = new Set<string>();
      for (const { rec } of await this.records()) {
        const key = `${rec.tenant}\n${rec.original}`;
        if (seen.has(key) || this.subs.get(rec.tenant)?.has(rec.original) === true) continue;
        seen.add(key);
        await this.syncSubscription(rec.tenant, rec.original);
      }
    });
  }

  /**
   * On a shared store, every `seconds`: each original is looked at again with the registrations and the live brokers
   * as the store has them now (a registration made on another broker, a broker of the set gone or come).
   */
  refreshEvery(seconds: number): void {
    if (this.owner === undefined || seconds <= 0 || this.refresh !== undefined) return;
    this.refresh = setInterval(
      () =>
        this.run(async () => {
          const tenants = new Set<string>(this.subs.keys());
          for (const { rec } of await this.records()) tenants.add(rec.tenant);
          for (const t of tenants) await this.syncTenant(t);
        }),
      seconds * 1000,
    );
    this.refresh.unref();
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.retry);
    clearInterval(this.refresh);
  }

  private run(work: () => Promise<void>): void {
    this.queue = this.queue
      .then(work)
      .catch((e: unknown) =>
        this.log.warn({ err: e instanceof Error ? e.message : String(e) }, 'subordinate subscriptions cannot be kept'),
      );
  }

  /** The tenant's registrations, read from the store the first time, then kept by their changes. */
  private async registrationsOf(tenant: string): Promise<Map<string, RegistrationBody>> {
    let regs = this.regs.get(tenant);
    // Shared: a registration another broker made or deleted is in the store, never in a change heard here.
    if (regs === undefined || this.owner !== undefined) {
      regs = new Map();
      for (const { id, doc } of await this.store.collection(tenant, REGISTRATIONS).list())
        regs.set(id, (doc as unknown as RegistrationDoc).body);
      this.regs.set(tenant, regs);
    }
    return regs;
  }

  private async records(): Promise<Array<{ key: string; rec: SubordinateRecord }>> {
    return (await this.store.collection('', SUBORDINATES).list()).map(({ id, doc }) => ({
      key: id,
      rec: doc as unknown as SubordinateRecord,
    }));
  }

  /** Every original of the tenant looked at, with the registrations and records read once for all of them. */
  private async syncTenant(tenant: string): Promise<void> {
    const ids = new Set<string>(this.subs.get(tenant)?.keys());
    const records = await this.records();
    for (const { rec } of records) if (rec.tenant === tenant) ids.add(rec.original);
    const regs = [...(await this.registrationsOf(tenant)).values()];
    for (const id of ids) if (!isSubordinateId(id)) await this.syncSubscription(tenant, id, { regs, records });
  }

  private async syncSubscription(
    tenant: string,
    id: string,
    read?: { regs: RegistrationBody[]; records: Array<{ key: string; rec: SubordinateRecord }> },
  ): Promise<void> {
    if (this.closed) return;
    if (this.owner !== undefined && !(await this.owner.owns(`${tenant}\n${id}`))) return;
    const doc = this.subs.get(tenant)?.get(id);
    const regs = read?.regs ?? [...(await this.registrationsOf(tenant)).values()];
    const targets = doc === undefined ? [] : subordinateTargets(doc.body, regs, Date.now());
    const mine = (read?.records ?? (await this.records())).filter(({ rec }) => rec.tenant === tenant && rec.original === id);
    const records = this.store.collection('', SUBORDINATES);
    for (const { key, rec } of mine) {
      const reg = targets.find((r) => r.id === rec.registration);
      if (reg !== undefined && reg.endpoint === rec.endpoint) continue;
      // The original or the registration is gone (or moved): the source's subscription goes too, as far as it can.
      await records.delete(key);
      if (rec.state === 'made')
        await this.send(
          'DELETE',
          rec,
          undefined,
          regs.find((r) => r.id === rec.registration),
        );
    }
    if (doc === undefined) return;
    for (const reg of targets) {
      const found = mine.find(({ rec }) => rec.registration === reg.id && rec.endpoint === reg.endpoint);
      if (
        found !== undefined &&
        found.rec.state === 'made' &&
        found.rec.syncedAt === doc.modifiedAt &&
        found.rec.notifyUri === this.notifyUri(doc, found.key)
      )
        continue;
      await this.make(tenant, doc, reg, found);
    }
  }

  /** Makes (or brings up to date) the subordinate subscription of `doc` on `reg`'s source. */
  private async make(
    tenant: string,
    doc: SubscriptionDoc,
    reg: RegistrationBody,
    found: { key: string; rec: SubordinateRecord } | undefined,
  ): Promise<void> {
    const key = found?.key ?? recordKey(tenant, doc.body.id, reg);
    const notifyUri = this.notifyUri(doc, key);
    if (notifyUri === undefined) {
      this.log.warn({ subscription: doc.body.id }, 'no subordinate subscription: the broker knows no address of its own (--brokerUrl)');
      return;
    }
    const rec: SubordinateRecord = found?.rec ?? {
      tenant,
      original: doc.body.id,
      registration: reg.id,
      endpoint: reg.endpoint,
      sourceId: SUBORDINATE_ID_PREFIX + key,
      state: 'pending',
    };
    const records = this.store.collection('', SUBORDINATES);
    if (found === undefined) await records.put(key, rec as unknown as Record<string, unknown>);
    const rctx = await this.contexts.resolve(doc.context);
    const body = subordinateBody(doc, rec.sourceId, notifyUri, rctx.compactIri.bind(rctx));
    let status: number | string;
    if (rec.state === 'made') {
      // §5.8.2: the original updated, the subordinate with it (its id and type are no members of an update).
      const { id: _id, type: _type, ...fragment } = body;
      status = await this.send('PATCH', rec, fragment, reg);
      if (status === 404) status = await this.send('POST', rec, body, reg);
    } else {
      status = await this.send('POST', rec, body, reg);
      // Made before, its answer lost: brought up to date instead.
      if (status === 409) {
        const { id: _id, type: _type, ...fragment } = body;
        status = await this.send('PATCH', rec, fragment, reg);
      }
    }
    if (typeof status === 'number' && status >= 200 && status < 300) {
      rec.state = 'made';
      rec.syncedAt = doc.modifiedAt;
      rec.notifyUri = notifyUri;
      delete rec.error;
    } else {
      rec.state = 'pending';
      rec.error = typeof status === 'number' ? `the source answered ${status}` : status;
      this.log.warn(
        { subscription: doc.body.id, registration: reg.id, reason: rec.error },
        `subordinate subscription not made: tried again in ${RETRY_MS / 1000} s`,
      );
      this.retryLater();
    }
    // The original may have been deleted meanwhile (its record removed by a later look): not written back then.
    if ((await records.get(key)) !== undefined) await records.put(key, rec as unknown as Record<string, unknown>);
  }

  /** Where the subordinate of `doc` with `key` notifies (a changed --brokerUrl moves it); undefined: no address known. */
  private notifyUri(doc: SubscriptionDoc, key: string): string | undefined {
    const base = this.brokerUrl ?? doc.brokerUrl ?? this.listenUrl;
    return base === undefined ? undefined : `${base}${API_PREFIX}${SUBORDINATE_NOTIFY_PATH}${key}`;
  }

  /** One request to the source; its status, or why there is none. */
  private async send(
    method: 'POST' | 'PATCH' | 'DELETE',
    rec: SubordinateRecord,
    body: unknown,
    reg: RegistrationBody | undefined,
  ): Promise<number | string> {
    const base = rec.endpoint.replace(/\/+$/, '');
    const path = method === 'POST' ? '/subscriptions' : `/subscriptions/${pathSegment(rec.sourceId)}`;
    const headers: Record<string, string> = { accept: 'application/json', ...(reg === undefined ? {} : registrationHeaders(reg)) };
    if (body !== undefined)
      headers['content-type'] = (body as Record<string, unknown>)['@context'] === undefined ? 'application/json' : 'application/ld+json';
    try {
      const reply = await sendToSource({
        method,
        url: new URL(`${base}${API_PREFIX}${path}`),
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        timeoutMs: REQUEST_TIMEOUT_MS,
      });
      return reply.status;
    } catch (e) {
      return e instanceof Error ? e.message : String(e);
    }
  }

  /** Every tenant with a subordinate subscription still to make is looked at again after RETRY_MS. */
  private retryLater(): void {
    if (this.retry !== undefined || this.closed) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      this.run(async () => {
        const tenants = new Set<string>();
        for (const { rec } of await this.records()) if (rec.state === 'pending') tenants.add(rec.tenant);
        for (const t of tenants) await this.syncTenant(t);
      });
    }, RETRY_MS);
    this.retry.unref();
  }
}

/**
 * The key of the record of `original`'s subordinate on `reg`'s source (UUID-shaped, as the notification route reads
 * it): the same on every broker, so that two brokers making it at once (the set's live brokers read differently for
 * a moment) make one record and one subscription on the source (the second POST answers 409 and becomes a PATCH).
 */
function recordKey(tenant: string, original: string, reg: RegistrationBody): string {
  const h = createHash('sha256').update(`${tenant}\n${original}\n${reg.id}\n${reg.endpoint}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/** Tells the notifier that a registration changed (from the thread that changed it). */
export function broadcastRegistrationChanged(change: RegistrationChanged, instance: string | undefined): void {
  const channel = new BroadcastChannel(channelName(REGISTRATIONS_CHANNEL, instance));
  channel.postMessage(change);
  channel.close();
}

// Inbound samples as attribute writes (seed 001 §6.2), on the main thread: each through the pipeline as an entry of a
// batch upsert with update of its Channel's entity (the entity created with the Channel's type when it does not
// exist), so the store, subscriptions and a history see every sample as any write; not asked to the auth plugin
// (PipelineTask.internal). The samples of one entity are written in the order they came, one batch at a time
// (pipeline threads run writes concurrently, and the last sample must be the attribute's value); those that arrive
// while a batch is written go together in the next one, each its own entry, applied in order in one transaction.
import type { Logger } from '../logger.js';
import type { PipelineRunner } from '../pipeline/runner.js';
import type { PipelineTask } from '../pipeline/task.js';
import { LdOp, API_PREFIX } from '../ngsild/operations.js';

export interface Sample {
  entityId: string;
  entityType: string;
  attribute: string;
  value: unknown;
  /** ISO 8601: when the value was read (seed 001 §6.3 publishTime). */
  observedAt?: string;
  /** Sub-Properties written with the value (Modbus: modbusStatus). */
  subProperties?: Record<string, string | number | boolean>;
}

/** Samples of one entity in one write. */
const BATCH_MAX = 500;
/** Samples of one entity waiting at most: past it the oldest is dropped (a server faster than the store). */
const WAITING_MAX = 10_000;
/** Failures and drops logged per entity: the first, then one in this many. */
const LOGGED_EVERY = 1000;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The write of samples of one entity, in order: each an entry of the upsert with its attribute. */
export function sampleTask(samples: readonly Sample[]): PipelineTask {
  const entries = samples.map((s) => ({ id: s.entityId, type: s.entityType, [s.attribute]: attributeOf(s) }));
  const body = encoder.encode(JSON.stringify(entries));
  return {
    op: LdOp.BatchUpsert,
    route: `${API_PREFIX}/entityOperations/upsert`,
    method: 'POST',
    path: `${API_PREFIX}/entityOperations/upsert`,
    query: 'options=update',
    params: [],
    headers: { contentType: 'application/json' },
    body: body.buffer as ArrayBuffer,
    internal: true,
  };
}

/** The attribute a sample writes: a Property with the value, and its observedAt and Sub-Properties when it has them. */
function attributeOf(s: Sample): Record<string, unknown> {
  const attr: Record<string, unknown> = { type: 'Property', value: s.value };
  if (s.observedAt !== undefined) attr.observedAt = s.observedAt;
  if (s.subProperties !== undefined) for (const [k, v] of Object.entries(s.subProperties)) attr[k] = { type: 'Property', value: v };
  return attr;
}

interface EntityQueue {
  waiting: Sample[];
  writing: boolean;
  failures: number;
  dropped: number;
}

export class SampleWriter {
  private readonly queues = new Map<string, EntityQueue>();

  constructor(
    private readonly runner: PipelineRunner,
    private readonly log: Logger,
  ) {}

  add(sample: Sample): void {
    let q = this.queues.get(sample.entityId);
    if (q === undefined) {
      q = { waiting: [], writing: false, failures: 0, dropped: 0 };
      this.queues.set(sample.entityId, q);
    }
    if (q.waiting.push(sample) > WAITING_MAX) {
      q.waiting.shift();
      if (q.dropped++ % LOGGED_EVERY === 0)
        this.log.warn(
          { entityId: sample.entityId, dropped: q.dropped, waiting: WAITING_MAX },
          'samples arrive faster than they are written: the oldest dropped',
        );
    }
    if (!q.writing) void this.drain(sample.entityId, q);
  }

  private async drain(entityId: string, q: EntityQueue): Promise<void> {
    q.writing = true;
    try {
      while (q.waiting.length > 0) {
        const batch = q.waiting.splice(0, BATCH_MAX);
        try {
          const result = await this.runner.run(sampleTask(batch));
          // 201 or 204: every entry written; 207 names those that were not (a value NGSI-LD refuses, such as null).
          if (result.status !== 201 && result.status !== 204) this.failed(entityId, q, result.status, result.body);
        } catch (e) {
          this.failed(entityId, q, 0, null, e);
        }
      }
    } finally {
      q.writing = false;
      if (q.waiting.length === 0 && q.failures === 0 && q.dropped === 0) this.queues.delete(entityId);
    }
  }

  private failed(entityId: string, q: EntityQueue, status: number, body: Uint8Array | null, err?: unknown): void {
    if (q.failures++ % LOGGED_EVERY !== 0) return;
    const detail = body === null ? undefined : decoder.decode(body).slice(0, 500);
    this.log.warn({ entityId, status, detail, err, failures: q.failures }, 'samples not written');
  }
}

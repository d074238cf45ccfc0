// What one decision reads: the request (through AuthRequest) and the sender's credential. One object per
// evaluator, reset for each decision; values derived from the request are computed at most once (seed 000 §5.6).

import type { AuthRequest } from '../../../../auth/contract.js';

const NOT_READ = Symbol('not read');

/** Request facts a policy guard compares to strings (compile.ts PolicyGuard). */
export enum Fact {
  EntityType = 1,
  LastSegment = 2,
}

/** DecisionInput.attribute when the question is whether some attribute may be allowed (no expanded name holds NUL). */
export const ANY_ATTRIBUTE = '\u0000any attribute';

const utf8 = new TextDecoder('utf-8', { fatal: true });

export class DecisionInput {
  method = '';
  credential: unknown = undefined;
  /** Milliseconds since the epoch, fixed for one decision. */
  now = 0;
  /**
   * --dsecNgsild, an entity decision (seed 000 §5.8): the entity's expanded types (empty for an entity not stored);
   * null outside the entity hook, where `ngsi-ld:entityType` is read from the request as the reference chain does.
   */
  entityTypes: readonly string[] | null = null;
  /** --dsecNgsild: the one expanded attribute decided (`ngsi-ld:attribute`), or ANY_ATTRIBUTE; undefined when none is. */
  attribute: string | undefined = undefined;
  private req: AuthRequest | null = null;
  private strippedPath = false;
  private bodyValue: unknown = NOT_READ;
  private entityTypeValue: unknown = NOT_READ;
  private lastSegmentValue: string | typeof NOT_READ = NOT_READ;
  /** Role lists read once per decision (every policy of a set may read them); a conflict is kept as its error. */
  private readonly roleValues: unknown[] = [NOT_READ, NOT_READ];

  reset(req: AuthRequest, credential: unknown, strippedPath: boolean, now: number): this {
    this.req = req;
    this.method = req.method.toUpperCase();
    this.credential = credential === null ? undefined : credential;
    this.strippedPath = strippedPath;
    this.now = now;
    this.entityTypes = null;
    this.attribute = undefined;
    this.bodyValue = NOT_READ;
    this.entityTypeValue = NOT_READ;
    this.lastSegmentValue = NOT_READ;
    this.roleValues[0] = NOT_READ;
    this.roleValues[1] = NOT_READ;
    return this;
  }

  /** Drops the request so nothing of it outlives the decision. */
  clear(): void {
    this.req = null;
    this.credential = undefined;
    this.entityTypes = null;
    this.attribute = undefined;
    this.bodyValue = NOT_READ;
    this.entityTypeValue = NOT_READ;
    this.roleValues[0] = NOT_READ;
    this.roleValues[1] = NOT_READ;
  }

  /** The role list `slot` (0: vc:role, 1: dome-op:role), computed once per decision; rethrows a conflict. */
  roles(slot: 0 | 1, compute: (credential: unknown) => unknown): unknown {
    let v = this.roleValues[slot];
    if (v === NOT_READ) {
      try {
        v = compute(this.credential);
      } catch (e) {
        v = e;
      }
      this.roleValues[slot] = v;
    }
    if (v instanceof Error) throw v;
    return v;
  }

  /** Whether reading the role list `slot` throws a conflict (seed 000 §5.7 rule 5); computed once per decision. */
  rolesConflict(slot: 0 | 1, compute: (credential: unknown) => unknown): boolean {
    if (this.roleValues[slot] === NOT_READ) {
      try {
        this.roleValues[slot] = compute(this.credential);
      } catch (e) {
        this.roleValues[slot] = e;
      }
    }
    return this.roleValues[slot] instanceof Error;
  }

  /** `ngsi-ld:tenant` (seed 000 §5.8): the request's tenant, '' for the default one. */
  tenant(): string | undefined {
    const r = this.req;
    if (r === null) return undefined;
    return r.tenant ?? undefined;
  }

  get path(): string {
    return this.req?.path ?? '';
  }

  /** `http:path`: with --dsecStrippedPath the gateway's `x-stripped-path` header first (seed 000 §5.7 difference 2). */
  httpPath(): string {
    if (this.strippedPath) {
      const h = this.req?.header('x-stripped-path');
      if (h !== undefined) return h;
    }
    return this.path;
  }

  /** The last path segment: the target of an `odrl:Asset` (seed 000 §5.6). */
  lastSegment(): string {
    if (this.lastSegmentValue === NOT_READ) {
      const p = this.path;
      const q = p.indexOf('?');
      const noQuery = q < 0 ? p : p.slice(0, q);
      this.lastSegmentValue = noQuery.slice(noQuery.lastIndexOf('/') + 1);
    }
    return this.lastSegmentValue;
  }

  param(name: string): string | undefined {
    const params = this.req?.params;
    if (params === undefined) return undefined;
    for (const [k, v] of params) if (k === name) return v;
    return undefined;
  }

  /** The body as sent, parsed once; undefined when absent or no JSON. */
  body(): unknown {
    if (this.bodyValue === NOT_READ) {
      this.bodyValue = undefined;
      const bytes = this.req?.body() ?? null;
      if (bytes !== null && bytes.length > 0) {
        try {
          this.bodyValue = JSON.parse(utf8.decode(bytes)) as unknown;
        } catch {
          this.bodyValue = undefined;
        }
      }
    }
    return this.bodyValue;
  }

  /**
   * `ngsi-ld:entityType` as PAP 1.7.3 reads it: the third colon-separated part of the last path segment, else the
   * `type` URL parameter, else the body's `type` as sent, else the one type every entry of a batch shares.
   */
  entityType(): unknown {
    if (this.entityTypeValue === NOT_READ) this.entityTypeValue = this.findEntityType();
    return this.entityTypeValue;
  }

  private findEntityType(): unknown {
    // the third colon-separated part, without splitting the whole segment
    const segment = this.lastSegment();
    const first = segment.indexOf(':');
    const second = first < 0 ? -1 : segment.indexOf(':', first + 1);
    if (second >= 0) {
      const third = segment.indexOf(':', second + 1);
      return segment.slice(second + 1, third < 0 ? segment.length : third);
    }
    const fromQuery = this.param('type');
    if (fromQuery !== undefined) return fromQuery;
    const body = this.body();
    if (Array.isArray(body)) {
      let shared: string | undefined;
      for (const entry of body) {
        const t = entry !== null && typeof entry === 'object' ? (entry as Record<string, unknown>)['type'] : undefined;
        if (typeof t !== 'string') return undefined;
        if (shared === undefined) shared = t;
        else if (shared !== t) return undefined;
      }
      return shared;
    }
    if (body !== null && typeof body === 'object') return (body as Record<string, unknown>)['type'];
    return undefined;
  }
}

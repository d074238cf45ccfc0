// The few NGSI-LD calls scenario setups make to seed data; any unexpected status throws with the status and body,
// so a report can say exactly what the broker answered.
import { benchEntity } from './bench-entity.js';
import type { LoadRequest } from './load.js';

export const NGSI = '/ngsi-ld/v1';
export const JSON_HEADERS: Record<string, string> = { 'content-type': 'application/json' };

export interface Answer {
  status: number;
  body: string;
}

export class UnexpectedAnswer extends Error {
  constructor(
    readonly what: string,
    readonly answer: Answer,
  ) {
    super(`${what} answered ${answer.status}: ${answer.body.slice(0, 500)}`);
  }
}

export async function send(
  baseUrl: string,
  method: string,
  path: string,
  body?: string,
  headers?: Record<string, string>,
): Promise<Answer> {
  const res = await fetch(baseUrl + path, { method, body, headers: headers ?? (body === undefined ? undefined : JSON_HEADERS) });
  return { status: res.status, body: await res.text() };
}

export async function expectStatus(what: string, answer: Promise<Answer>, accepted: readonly number[]): Promise<Answer> {
  const a = await answer;
  if (!accepted.includes(a.status)) throw new UnexpectedAnswer(what, a);
  return a;
}

/** Upserts the entities `ids` in batches of 100 (created or replaced: 201 or 204). */
export async function seedEntities(baseUrl: string, ids: readonly string[]): Promise<void> {
  for (let i = 0; i < ids.length; i += 100) {
    const batch = JSON.stringify(ids.slice(i, i + 100).map((id) => benchEntity(id)));
    await expectStatus(`seeding upsert of ${ids[i]}..`, send(baseUrl, 'POST', `${NGSI}/entityOperations/upsert`, batch), [201, 204]);
  }
}

/**
 * PATCH /entities/{id}/attrs/temperature cycling over `ids` (the first, then each in turn), a new value each time:
 * the write load of the patch scenario and of the benchmarks that compare brokers under it.
 */
export function attributePatches(ids: readonly string[]): LoadRequest[] {
  let n = 0;
  return [
    {
      method: 'PATCH',
      path: `${NGSI}/entities/${ids[0]}/attrs/temperature`,
      headers: JSON_HEADERS,
      body: '{"type":"Property","value":0}',
      next: () => {
        n++;
        return { path: `${NGSI}/entities/${ids[n % ids.length]}/attrs/temperature`, body: `{"type":"Property","value":${n}}` };
      },
    },
  ];
}

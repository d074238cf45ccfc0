// GET /info/sourceIdentity (CIM 009 v1.8.1 §5.15.1, §6.33.3.1, ContextSourceIdentity §5.2.40): who this broker is as
// a context source: its id and alias (--contextSourceAlias, the pseudonym of its Via entries), how long it has run
// and its clock.
import type { OpHandler } from '../pipeline/handler.js';

/** When this thread started: the broker's threads start with it. */
const startedAt = Date.now();

/** An ISO 8601 duration of whole seconds (PT…S), as §5.2.40 contextSourceUptime is written. */
export function uptimeDuration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return `PT${h > 0 ? `${h}H` : ''}${m > 0 ? `${m}M` : ''}${s % 60}S`;
}

export const sourceIdentity: OpHandler = async (_req, ctx) => {
  const alias = ctx.config.contextSourceAlias;
  const now = Date.now();
  return {
    status: 200,
    body: {
      id: `urn:ngsi-ld:ContextSource:${alias}`,
      type: 'ContextSourceIdentity',
      contextSourceAlias: alias,
      contextSourceUptime: uptimeDuration(now - startedAt),
      contextSourceTimeAt: new Date(now).toISOString(),
    },
    withContext: true,
  };
};

// GET /ngsi-ld/v1/channels (seed 001 §2.2, §4.1): every Channel of the loaded bridges with its channelInfo, its state
// and, when dormant, the reason; a refused Channel was not created and is not listed. Without bridges: [].
import { LdError } from '../ngsild/problem.js';
import type { OpHandler } from '../pipeline/handler.js';

export const listChannels: OpHandler = async (_req, ctx) => {
  if (ctx.channels === undefined) return { status: 200, body: [] };
  const channels = await ctx.channels.read();
  if (channels === undefined) throw new LdError('Unavailable', 'the bridge host did not answer in time; retry later');
  return { status: 200, body: channels };
};

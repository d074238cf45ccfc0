// The Via header of forwarded requests and loop detection (CIM 009 v1.8.1 §6.3.18, RFC 9110 §7.6.3): a broker adds
// itself to Via when it forwards; a request whose Via names it already went through it, and forwarding it again
// would loop: 508 LoopDetected.
import { LdError } from '../../ngsild/problem.js';
import type { LdRequest } from '../../pipeline/ld-request.js';
import type { WorkerContext } from '../../pipeline/worker-context.js';

/** A Via value the broker copies into its own requests: visible ASCII and spaces, bounded. */
const SAFE_VIA = /^[\x20-\x7e\t]{1,4096}$/;

/** The incoming Via, when it is one the broker may copy; undefined otherwise (or absent). */
function incomingVia(req: LdRequest): string | undefined {
  const via = req.header('via');
  return via !== undefined && SAFE_VIA.test(via) ? via : undefined;
}

/** The pseudonyms (received-by) of a Via value: `1.1 name (comment), HTTP/1.1 other`. */
export function viaNames(via: string): string[] {
  const names: string[] = [];
  for (const part of via.split(',')) {
    const words = part.trim().split(/[ \t]+/);
    if (words.length >= 2) names.push(words[1]!);
  }
  return names;
}

/** 508 when the request went through this broker already (its alias is in Via). */
export function checkLoop(req: LdRequest, ctx: WorkerContext): void {
  const via = incomingVia(req);
  if (via !== undefined && viaNames(via).includes(ctx.config.contextSourceAlias))
    throw new LdError(
      'LoopDetected',
      `the request went through this broker (${ctx.config.contextSourceAlias}) already: Via ${via.slice(0, 200)}`,
    );
}

/** The Via of a request this broker forwards: the incoming one and this broker. */
export function outgoingVia(req: LdRequest, ctx: WorkerContext): string {
  const via = incomingVia(req);
  const self = `1.1 ${ctx.config.contextSourceAlias}`;
  return via === undefined ? self : `${via}, ${self}`;
}

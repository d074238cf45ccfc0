// The checks of a request head both HTTP servers leave to the front, so that both refuse the same heads the same way:
// its size (431), header values the broker would not receive as sent (400), an HTTP/1.1 request without Host (400).
import { LdError } from '../ngsild/problem.js';

/**
 * The largest request head served, request line and header fields together (node:http's default maxHeaderSize).
 * RFC 9110 §15.5.20 / RFC 6585 §5: a larger one is answered 431.
 */
export const MAX_HEAD_BYTES = 16 * 1024;

/**
 * What a header value may hold to reach the pipeline: visible ASCII, space and tab (RFC 9110 §5.5 field-vchar without
 * obs-text). uWS trims bytes from 0x80 up at both ends of a value (it compares them as signed chars, with the
 * whitespace) and hands the rest over as UTF-8 or Latin-1 depending on the call; node:http hands them as Latin-1. No
 * header the broker reads (Content-Type, Accept, Link, NGSILD-Tenant, Authorization, Host) is other than ASCII, so a
 * value with any other byte is refused rather than read differently by each server; DEL, which node:http refuses
 * itself, is refused the same way on uWS.
 */
const NOT_FIELD_VCHAR = /[^\t\x20-\x7e]/;

export function headerValueProblem(name: string, value: string): LdError | undefined {
  if (!NOT_FIELD_VCHAR.test(value)) return undefined;
  return new LdError('BadRequestData', `the ${name.slice(0, 64)} header holds a character other than visible ASCII, space or tab`);
}

export function headTooLarge(): LdError {
  return new LdError('BadRequestData', `the request head is larger than ${MAX_HEAD_BYTES} bytes`, 431);
}

/** RFC 9112 §3.2: a server MUST answer 400 to an HTTP/1.1 request that lacks Host. */
export function missingHost(): LdError {
  return new LdError('BadRequestData', 'an HTTP/1.1 request must carry a Host header (RFC 9112 §3.2)');
}

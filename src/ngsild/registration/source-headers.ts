// The headers a registration gives every request to its source (CIM 009 v1.8.1 §5.2.9): its `tenant` as
// NGSILD-Tenant and its `contextSourceInfo` pairs, each only when it is a header name and value that can be written as
// is and names no header the broker sets itself.
import type { RegistrationBody } from '../subscription/registration.js';

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/;
export const SAFE_HEADER_VALUE = /^[\x20-\x7e\t]{0,1024}$/;
/** Headers the broker sets itself: a registration's contextSourceInfo never replaces them. */
const OWN_HEADERS = new Set([
  'accept',
  'content-type',
  'content-length',
  'link',
  'via',
  'host',
  'ngsild-tenant',
  'connection',
  'transfer-encoding',
]);
const TENANT = /^[A-Za-z0-9_.~-]{1,200}$/;

export function registrationHeaders(body: RegistrationBody): Record<string, string> {
  const h: Record<string, string> = {};
  if (typeof body.tenant === 'string' && TENANT.test(body.tenant)) h['ngsild-tenant'] = body.tenant;
  const info = body.contextSourceInfo;
  if (Array.isArray(info))
    for (const kv of info as Array<{ key?: unknown; value?: unknown }>) {
      if (typeof kv.key !== 'string' || typeof kv.value !== 'string') continue;
      if (!TOKEN.test(kv.key) || !SAFE_HEADER_VALUE.test(kv.value) || OWN_HEADERS.has(kv.key.toLowerCase())) continue;
      h[kv.key] = kv.value;
    }
  return h;
}

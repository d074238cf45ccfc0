// The tenant a request names (CIM 009 v1.8 §4.14, the NGSILD-Tenant header): one parser for the whole broker. ''
// is the default tenant; any other is a name of 1 to 50 lower-case letters, digits, '_' or '-'.
import { badRequest } from './problem.js';

const TENANT_NAME = /^[a-z0-9_-]{1,50}$/;

/** Whether `text` is a tenant name as parseTenant gives it (the default tenant, '', is not one). */
export function isTenantName(text: string): boolean {
  return TENANT_NAME.test(text);
}

/**
 * The tenant of an NGSILD-Tenant value: '' when absent or empty, else the name in lower case (as Orion-LD keeps it
 * and the migration stream names it, seed 001 behaviour 6). 400 BadRequestData for a value that is no tenant name.
 */
export function parseTenant(header: string | undefined): string {
  if (header === undefined || header === '') return '';
  const name = header.toLowerCase();
  if (!TENANT_NAME.test(name))
    throw badRequest(`NGSILD-Tenant '${header.slice(0, 60)}' is not a valid tenant name: 1 to 50 letters, digits, '_' or '-'`);
  return name;
}

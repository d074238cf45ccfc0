// Key layout of the embdb store. Tenants are key prefixes; NUL separates parts (a NUL never occurs in
// a tenant name, an IRI or an entity id, which are all validated before they reach the store).

const SEP = '\u0000';
const AFTER = '\u0001';

export const entityKey = (tenant: string, id: string): string => tenant + SEP + id;
export const entityPrefix = (tenant: string): { start: string; end: string } => ({ start: tenant + SEP, end: tenant + AFTER });

export const docKey = (tenant: string, collection: string, id: string): string => tenant + SEP + collection + SEP + id;

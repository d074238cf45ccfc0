// Reading keys and policies from their sources (seed 000 §3, §5.4): a read either completes or fails whole,
// so a set is only ever replaced by a complete one. Runs on the primary instance only, never in a hook.

import { readFile } from 'node:fs/promises';
import type { DsecConfig, Source } from './options.js';

/** seed 000 §8: policy listing page size. */
export const PAP_PAGE_SIZE = 25;
/** A PAP that never answers an empty page is not read forever. */
const MAX_PAGES = 10_000;
const FETCH_TIMEOUT_MS = 10_000;
const MAX_DOCUMENT_BYTES = 32 * 1024 * 1024;

export class SourceError extends Error {}

async function fetchJson(url: string, signal: AbortSignal): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(url, {
      signal: AbortSignal.any([signal, AbortSignal.timeout(FETCH_TIMEOUT_MS)]),
      headers: { accept: 'application/json' },
    });
  } catch (e) {
    throw new SourceError(`GET ${url}: ${(e as Error).message}`);
  }
  if (res.status !== 200) {
    await res.body?.cancel();
    throw new SourceError(`GET ${url}: status ${res.status}`);
  }
  const text = await res.text();
  if (text.length > MAX_DOCUMENT_BYTES) throw new SourceError(`GET ${url}: the document is too large`);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new SourceError(`GET ${url}: the answer is no JSON`);
  }
}

export async function readSource(source: Source, signal: AbortSignal): Promise<unknown> {
  if (source.kind === 'url') return fetchJson(source.url, signal);
  let text: string;
  try {
    text = await readFile(source.path, { encoding: 'utf8', signal });
  } catch (e) {
    throw new SourceError(`${source.path}: ${(e as Error).message}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new SourceError(`${source.path}: the file is no JSON`);
  }
}

export interface KeyDocument {
  jwks: unknown;
  /** The issuer tokens must have; null when the discovery document names none (§5.5 rule 3). */
  issuer: string | null;
}

export async function readKeys(config: DsecConfig, signal: AbortSignal): Promise<KeyDocument> {
  if (config.keys.kind === 'jwks') return { jwks: await readSource(config.keys.source, signal), issuer: config.issuer };
  const discovery = await fetchJson(config.keys.url, signal);
  if (discovery === null || typeof discovery !== 'object') throw new SourceError('the discovery document is no JSON object');
  const d = discovery as Record<string, unknown>;
  if (typeof d['jwks_uri'] !== 'string') throw new SourceError('the discovery document has no jwks_uri');
  let jwksUrl: string;
  try {
    jwksUrl = new URL(d['jwks_uri'], config.keys.url).href;
  } catch {
    throw new SourceError(`the discovery document's jwks_uri '${d['jwks_uri']}' is no URL`);
  }
  const issuer = config.issuer ?? (typeof d['issuer'] === 'string' && d['issuer'] !== '' ? d['issuer'] : null);
  return { jwks: await fetchJson(jwksUrl, signal), issuer };
}

/** The policy documents of the source, in order: the PAP's pages until an empty one, or the one document. */
export async function readPolicies(config: DsecConfig, signal: AbortSignal): Promise<unknown[]> {
  if (config.policies.kind === 'document') return [await readSource(config.policies.source, signal)];
  const base = config.policies.url.endsWith('/') ? config.policies.url : `${config.policies.url}/`;
  const pages: unknown[] = [];
  for (let page = 0; page < MAX_PAGES; page++) {
    const listing = await fetchJson(`${base}policy?page=${page}&pageSize=${PAP_PAGE_SIZE}`, signal);
    if (!Array.isArray(listing)) throw new SourceError(`page ${page} of the PAP's listing is no array`);
    if (listing.length === 0) return pages;
    pages.push(listing);
  }
  throw new SourceError(`the PAP's listing has no empty page within ${MAX_PAGES} pages`);
}

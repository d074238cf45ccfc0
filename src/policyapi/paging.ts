// `page` and `pageSize` of `GET /policy` (seed 000 §4.1): pages are numbered from 0 as in the reference PAP and
// as `dsec` reads them (page 0, 1, ... until an empty page); `pageSize` defaults to 25 (§8).
import { badRequest } from './problem.js';

export const DEFAULT_PAGE_SIZE = 25;
/** Larger pages are refused (400), not clamped: a clamped page would make the next page number skip policies. */
export const MAX_PAGE_SIZE = 1000;
const MAX_PAGE = 2 ** 31 - 1;

export interface Paging {
  offset: number;
  limit: number;
}

const DIGITS = /^\d{1,10}$/;

export function parsePaging(query: string): Paging {
  const params = new URLSearchParams(query);
  const page = integer(params.get('page'), 'page', 0, MAX_PAGE, 0);
  const pageSize = integer(params.get('pageSize'), 'pageSize', 1, MAX_PAGE_SIZE, DEFAULT_PAGE_SIZE);
  return { offset: page * pageSize, limit: pageSize };
}

function integer(text: string | null, name: string, min: number, max: number, absent: number): number {
  if (text === null) return absent;
  const n = DIGITS.test(text) ? Number(text) : NaN;
  if (!(n >= min && n <= max)) throw badRequest(`${name} must be an integer from ${min} to ${max}, not '${text}'`);
  return n;
}

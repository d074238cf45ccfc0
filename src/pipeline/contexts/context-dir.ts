// --contextDir: @context documents served from local files instead of the network (air-gapped deployments).
//
// The directory holds `index.json`, one JSON object mapping each context URL to a file path relative to the
// directory (paths may not leave it). Every load of a mapped URL, at any depth of a context, is served from the
// file; mapping the URL of the configured core version replaces the embedded core file. Example:
//
//   {
//     "https://example.org/ctx/building.jsonld": "building.jsonld",
//     "https://smartdatamodels.org/context.jsonld": "sdm/context.jsonld",
//     "urn:example:context:parking": "parking.jsonld"
//   }
//
// Each file must be a JSON object with an @context member. Everything is read and checked once, at start-up:
// a missing or invalid index or file stops the broker with a message naming it.
import { readFileSync } from 'node:fs';
import { isAbsolute, relative, resolve as resolvePath, sep } from 'node:path';
import { LdError } from '../../ngsild/problem.js';
import { parseContextDocument } from '../../ngsild/context/context-document.js';

/** URL → parsed context document, for every entry of the index. */
export function loadContextDir(dir: string): Map<string, object> {
  const base = resolvePath(dir);
  const where = `--contextDir ${dir}`;
  let text: string;
  try {
    text = readFileSync(resolvePath(base, 'index.json'), 'utf8');
  } catch (e) {
    throw new Error(`${where}: index.json cannot be read (${e instanceof Error ? e.message : String(e)})`);
  }
  let index: unknown;
  try {
    index = JSON.parse(text);
  } catch (e) {
    throw new Error(`${where}: index.json is not valid JSON (${e instanceof Error ? e.message : String(e)})`);
  }
  if (typeof index !== 'object' || index === null || Array.isArray(index))
    throw new Error(`${where}: index.json must be a JSON object mapping context URLs to file paths`);
  const docs = new Map<string, object>();
  for (const [url, file] of Object.entries(index as Record<string, unknown>)) {
    if (!/^[A-Za-z][A-Za-z0-9+\-.]*:\S+$/.test(url)) throw new Error(`${where}: index.json key '${url}' is not an absolute URL`);
    if (typeof file !== 'string' || file === '') throw new Error(`${where}: index.json entry for ${url} must be a file path`);
    const path = resolvePath(base, file);
    const rel = relative(base, path);
    if (isAbsolute(file) || rel === '' || rel.startsWith('..' + sep) || rel === '..')
      throw new Error(`${where}: the file for ${url} ('${file}') must be a path inside the directory`);
    let content: string;
    try {
      content = readFileSync(path, 'utf8');
    } catch (e) {
      throw new Error(`${where}: ${file} (for ${url}) cannot be read (${e instanceof Error ? e.message : String(e)})`);
    }
    try {
      docs.set(url, parseContextDocument(url, content));
    } catch (e) {
      throw new Error(`${where}: ${file} (for ${url}): ${e instanceof LdError ? e.detail : String(e)}`);
    }
  }
  return docs;
}

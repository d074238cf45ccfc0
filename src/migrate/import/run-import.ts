// The importer (seed 001 §2.5, §2.7, §4.3, §7, importer behaviour 1 to 7): reads a broker-migration stream and
// writes each record, in stream order, through the code a live write uses and the store and history contracts.
// A refused record is named on standard error and not written; the others are. No notification, no forwarding, no
// history beyond what the stream and behaviour 5 describe (§6 event 5): nothing here runs a subscription.
import type { Logger } from 'pino';
import type { History } from '../../history/contract.js';
import type { BatchItem, Store } from '../../store/contract.js';
import type { ResolvedContext } from '../../ngsild/context/resolved.js';
import type { StoredEntity } from '../../ngsild/entity/model.js';
import { isPlainObject } from '../../ngsild/entity/syntax.js';
import { LdError } from '../../ngsild/problem.js';
import { parseTenant } from '../../ngsild/tenant.js';
import type { RegistrationBody } from '../../ngsild/subscription/registration.js';
import { NameRule } from './name-rule.js';
import { storedEntityOf } from './entity-record.js';
import { importSubscription, importRegistration } from './documents.js';
import { HISTORY_BATCH, HistoryBatch, temporalEntityOf, temporalInstanceOf } from './history-records.js';
import { CreatedHistory } from './created-history.js';
import { streamLines } from './line-reader.js';
import { ImportReport, categoryOf, type Category } from './report.js';
import { Progress } from './progress.js';

/** Entity records written per store transaction (mutateEntities): each still refused or written alone. */
const ENTITY_BATCH = 200;
/** The longest line read; a longer one is refused (the broker's largest request body is 8 MiB by default). */
export const MAX_LINE_BYTES = 64 * 1024 * 1024;

export interface ImportDeps {
  store: Store;
  /** The history `--troe` names, if any. */
  history?: History;
  /** The core @context: the stream's names are IRIs or core terms (§2.5), expanded with it as a live write would. */
  core: ResolvedContext;
  coreTerms: ReadonlySet<string>;
  /** URI schemes a subscription's endpoint may use (the broker's, as its create routine checks them). */
  schemes: ReadonlySet<string>;
  /** Resolves a subscription's jsonldContext as the create routine does; throws an LdError when it cannot. */
  resolveJsonldContext(url: string): Promise<void>;
  /** The registration create routine's conflict check (§4.3.6.3); throws an LdError (409) on a conflict. */
  registrationConflicts(tenant: string, body: RegistrationBody): Promise<void>;
  log: Logger;
}

export interface ImportIo {
  input: AsyncIterable<Buffer | string>;
  /** Size of the input in bytes when known (a file): the progress line shows the percent read. */
  size?: number;
  /** Standard error: refusals and the report. */
  err: { write(text: string): unknown; isTTY?: boolean };
}

interface PendingEntity {
  line: number;
  entity: StoredEntity;
}

/** Runs the import; resolves with the report (exit status 1 when anything was refused). */
export async function runImport(deps: ImportDeps, io: ImportIo): Promise<ImportReport> {
  const progress = new Progress(io.err, io.size);
  const report = new ImportReport((line) => progress.print(line));
  const names = new NameRule(deps.coreTerms);
  const history = deps.history;
  const batch = history?.importBatch !== undefined ? new HistoryBatch(history) : undefined;
  const created = history?.importBatch !== undefined ? new CreatedHistory(deps.store, history) : undefined;
  let entities: PendingEntity[] = [];
  let entityTenant = '';

  const refusal = (e: unknown): string => {
    if (e instanceof LdError) return `${e.kind}: ${e.detail}`;
    deps.log.error({ err: e }, 'import: a record failed on an unexpected error');
    return `error: ${e instanceof Error ? e.message : String(e)}`;
  };

  const flushEntities = async (): Promise<void> => {
    if (entities.length === 0) return;
    const pending = entities;
    entities = [];
    const items: BatchItem<undefined>[] = pending.map(({ entity }) => ({
      id: entity.id,
      mutation: (current) => {
        // seed 001 §7: an id that exists in the target is refused, never overwritten.
        if (current !== undefined) throw new LdError('AlreadyExists', `entity '${entity.id}' already exists`);
        return { next: entity, result: undefined };
      },
    }));
    let outcomes;
    try {
      outcomes = await deps.store.mutateEntities(entityTenant, items, { createTenant: true, noHistory: true, expectAbsent: true });
    } catch (e) {
      const reason = refusal(e);
      for (const p of pending) report.refuse(p.line, 'entities', `entity ${p.entity.id} refused: ${reason}`);
      return;
    }
    for (let i = 0; i < pending.length; i++) {
      const o = outcomes[i]!;
      const p = pending[i]!;
      if (!o.ok) report.refuse(p.line, 'entities', `entity ${p.entity.id} refused: ${refusal(o.error)}`);
      else {
        report.ok('entities');
        await created?.note(entityTenant, p.entity.id);
      }
    }
  };

  const flushHistory = async (): Promise<void> => {
    if (batch === undefined || batch.size === 0) return;
    const { lines, records, refused } = await batch.flush();
    for (let i = 0; i < records.length; i++) {
      const r = records[i]!;
      const category: Category = r.kind === 'entity' ? 'temporal entity events' : 'temporal instances';
      if (refused === undefined) report.ok(category);
      else {
        created?.markNamed(r.tenant, r.id);
        report.refuse(lines[i]!, category, `history of ${r.id} refused with its batch (lines ${lines[0]} to ${lines.at(-1)}): ${refused}`);
      }
    }
  };

  const flushAll = async (): Promise<void> => {
    await flushEntities();
    await flushHistory();
  };

  try {
    for await (const line of streamLines(io.input, MAX_LINE_BYTES)) {
      progress.advance(line.bytesRead);
      if (line.text === undefined) {
        await flushAll();
        report.refuse(line.no, undefined, line.problem!);
        continue;
      }
      if (line.text.trim() === '') continue;
      let record: unknown;
      try {
        record = JSON.parse(line.text);
      } catch (e) {
        await flushAll();
        const why = line.unterminated ? 'the stream ends in the middle of this line (cut short?)' : 'not JSON';
        report.refuse(line.no, undefined, `${why}: ${(e as Error).message}`);
        continue;
      }
      const category = isPlainObject(record) ? categoryOf(record.kind) : undefined;
      if (!isPlainObject(record) || (category === undefined && record.kind !== 'header')) {
        await flushAll();
        report.refuse(
          line.no,
          undefined,
          `not a record of the stream (kind ${JSON.stringify(isPlainObject(record) ? record.kind : record)})`,
        );
        continue;
      }
      if (record.kind === 'header') {
        const problem = headerProblem(record, line.no);
        if (problem !== undefined) {
          report.refuse(line.no, undefined, problem);
          if (record.version !== 1) break;
        }
        continue;
      }
      const kind = record.kind as string;
      let tenant: string;
      let data: Record<string, unknown>;
      try {
        for (const k of Object.keys(record))
          if (k !== 'kind' && k !== 'tenant' && k !== 'data') throw new LdError('BadRequestData', `${k}: not a member of a record`);
        if (record.tenant !== undefined && typeof record.tenant !== 'string') throw new LdError('BadRequestData', 'tenant: not a string');
        // seed 001 behaviour 6: tenants lowercased.
        tenant = parseTenant(record.tenant as string | undefined);
        if (!isPlainObject(record.data)) throw new LdError('BadRequestData', 'data: missing or not an object');
        data = record.data;
        const bad = names.violations(kind, data);
        if (bad.length > 0) throw nameRefusal(bad[0]!.where, bad[0]!.name);
      } catch (e) {
        if (kind === 'entity' || kind === 'temporalEntity' || kind === 'temporalInstance') await flushAll();
        // An entity whose history the stream holds, refused for now, gets no created history in its place (behaviour 5).
        if ((kind === 'temporalEntity' || kind === 'temporalInstance') && isPlainObject(record.data))
          created?.markNamed(parseTenantOr(record.tenant), String(record.data.id));
        report.refuse(line.no, category, `${kind} ${idOf(record.data)} refused: ${refusal(e)}`);
        continue;
      }
      try {
        if (kind === 'entity') {
          await flushHistory();
          const entity = storedEntityOf(data, deps.core);
          if (tenant !== entityTenant || entities.length >= ENTITY_BATCH) await flushEntities();
          entityTenant = tenant;
          entities.push({ line: line.no, entity });
          continue;
        }
        if (kind === 'temporalEntity' || kind === 'temporalInstance') {
          await flushEntities();
          if (history === undefined) throw new LdError('BadRequestData', 'no history store: the importer runs with --troe none');
          if (batch === undefined) throw new LdError('OperationNotSupported', `the history '${history.name}' cannot import history`);
          const r =
            kind === 'temporalEntity'
              ? temporalEntityOf(tenant, data, deps.core)
              : await temporalInstanceOf(tenant, data, deps.core, batch.lastTypeOf);
          batch.add(line.no, r);
          if (batch.size >= HISTORY_BATCH) await flushHistory();
          continue;
        }
        await flushAll();
        if (kind === 'subscription') await importSubscription(deps, tenant, data);
        else await importRegistration(deps, tenant, data);
        report.ok(category!);
      } catch (e) {
        if (kind === 'temporalEntity' || kind === 'temporalInstance') created?.markNamed(tenant, String(data.id));
        report.refuse(line.no, category, `${kind} ${idOf(data)} refused: ${refusal(e)}`);
      }
    }
    await flushAll();
    if (created !== undefined)
      await created.write((written, failed) => {
        report.createdRowsWritten += written;
        report.createdRowsFailed += failed;
      });
  } catch (e) {
    created?.discard();
    throw e;
  } finally {
    progress.done();
  }
  await deps.store.flush();
  for (const line of report.summary()) io.err.write(line + '\n');
  return report;
}

function parseTenantOr(tenant: unknown): string {
  try {
    return parseTenant(typeof tenant === 'string' ? tenant : undefined);
  } catch {
    return '';
  }
}

function headerProblem(h: Record<string, unknown>, line: number): string | undefined {
  if (line !== 1) return 'a header may only be the first line';
  if (h.format !== 'broker-migration') return `header: format ${JSON.stringify(h.format)} is not broker-migration`;
  if (h.version !== 1)
    return `header: version ${JSON.stringify(h.version)} is not 1, the only version this importer reads: nothing imported`;
  return undefined;
}

function idOf(data: unknown): string {
  const id = isPlainObject(data) ? data.id : undefined;
  return typeof id === 'string' ? id.slice(0, 200) : '(no id)';
}

/** §7: the refusal names the term and says the stream must hold full IRIs. */
function nameRefusal(where: string, name: unknown): LdError {
  return new LdError(
    'BadRequestData',
    `${where}: ${JSON.stringify(name)} is not expanded (neither an absolute IRI nor an NGSI-LD core term): the stream must hold full IRIs`,
  );
}

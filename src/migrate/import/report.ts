// The importer's report (seed 001 §2.7), on standard error: each refused record named by its line number and a
// reason as it is refused, then one line per category with the counts imported and refused, and the history rows
// written for entities the stream has no history of (behaviour 5).

export type Category = 'entities' | 'subscriptions' | 'registrations' | 'temporal entity events' | 'temporal instances';

export const CATEGORIES: readonly Category[] = [
  'entities',
  'subscriptions',
  'registrations',
  'temporal entity events',
  'temporal instances',
];

/** The category of a record kind; undefined for the header and for kinds the stream does not have. */
export function categoryOf(kind: unknown): Category | undefined {
  switch (kind) {
    case 'entity':
      return 'entities';
    case 'subscription':
      return 'subscriptions';
    case 'registration':
      return 'registrations';
    case 'temporalEntity':
      return 'temporal entity events';
    case 'temporalInstance':
      return 'temporal instances';
    default:
      return undefined;
  }
}

export class ImportReport {
  readonly imported = new Map<Category, number>(CATEGORIES.map((c) => [c, 0]));
  readonly refused = new Map<Category, number>(CATEGORIES.map((c) => [c, 0]));
  /** Lines refused that are no record of a category (not JSON, an unknown kind, a header out of place). */
  otherRefused = 0;
  createdRowsWritten = 0;
  createdRowsFailed = 0;

  /** `write`: where a refusal line goes (standard error, past the progress line). */
  constructor(private readonly write: (line: string) => void) {}

  ok(category: Category, n = 1): void {
    this.imported.set(category, this.imported.get(category)! + n);
  }

  refuse(line: number, category: Category | undefined, reason: string): void {
    if (category === undefined) this.otherRefused++;
    else this.refused.set(category, this.refused.get(category)! + 1);
    this.write(`line ${line}: ${reason}`);
  }

  get anyRefused(): boolean {
    return this.otherRefused > 0 || this.createdRowsFailed > 0 || [...this.refused.values()].some((n) => n > 0);
  }

  get records(): number {
    let n = this.otherRefused;
    for (const c of CATEGORIES) n += this.imported.get(c)! + this.refused.get(c)!;
    return n;
  }

  /** The closing lines. */
  summary(): string[] {
    const lines = CATEGORIES.map((c) => `${c}: ${this.imported.get(c)} imported, ${this.refused.get(c)} refused`);
    if (this.otherRefused > 0) lines.push(`other lines: ${this.otherRefused} refused`);
    lines.push(`created rows (history): ${this.createdRowsWritten} written, ${this.createdRowsFailed} failed`);
    return lines;
  }
}

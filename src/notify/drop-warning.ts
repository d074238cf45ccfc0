// The warning about notifications the queue limits dropped (delivery.ts): the first drop is logged at once, then at
// most one line every DROP_WARN_MS with the counts since the last line, so a flood of drops is a few log lines.
import type { Logger } from '../logger.js';
import { readGauge } from './queue-gauge.js';

const DROP_WARN_MS = 10_000;

export type DropKind = 'overBudget' | 'endpointFull' | 'tooLarge';

export class DropWarning {
  private counts: Record<DropKind, number> = { overBudget: 0, endpointFull: 0, tooLarge: 0 };
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly log: Logger,
    private readonly gauge: Float64Array,
  ) {}

  note(kind: DropKind): void {
    this.counts[kind]++;
    if (this.timer === undefined) this.write();
  }

  close(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private readonly write = (): void => {
    const dropped = this.counts;
    if (dropped.overBudget + dropped.endpointFull + dropped.tooLarge === 0) {
      this.timer = undefined;
      return;
    }
    this.counts = { overBudget: 0, endpointFull: 0, tooLarge: 0 };
    this.log.warn(
      { dropped, queue: readGauge(this.gauge) },
      'notifications dropped by the queue limits, each counted as a failure of its subscription',
    );
    this.timer = setTimeout(this.write, DROP_WARN_MS);
    this.timer.unref();
  };
}

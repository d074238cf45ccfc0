// Requests answered, by operation (the catalog's LdOp, LdOp.None for a request no operation serves) and status
// (README "Metrics"). One array of counts per operation, made at its first request: counting is an increment.

/** Statuses are three-digit HTTP codes: anything else (never written by the front) is not counted. */
const STATUS_SLOTS = 600;

export class RequestCounts {
  private readonly byOp: Array<Float64Array | undefined> = [];

  count(op: number, status: number): void {
    if (status >= STATUS_SLOTS) return;
    (this.byOp[op] ??= new Float64Array(STATUS_SLOTS))[status]++;
  }

  /** Every count above zero, as [op, status, count]. */
  each(visit: (op: number, status: number, count: number) => void): void {
    for (let op = 0; op < this.byOp.length; op++) {
      const counts = this.byOp[op];
      if (counts === undefined) continue;
      for (let status = 100; status < STATUS_SLOTS; status++) if (counts[status]! > 0) visit(op, status, counts[status]!);
    }
  }
}

// Progress of a tuning run on stderr: which run of how many, and an estimate of the time left from the runs' planned
// load seconds plus the overhead (start, seeding, stop) the runs so far took on average.
export class Progress {
  private done = 0;
  private overheadS = 0;
  private readonly started = Date.now();
  private runStart = 0;
  private runPlanned = 0;

  constructor(
    private readonly plannedS: number[],
    private readonly write: (line: string) => void,
  ) {}

  get total(): number {
    return this.plannedS.length;
  }

  begin(what: string): void {
    this.runStart = Date.now();
    this.runPlanned = this.plannedS[this.done] ?? 0;
    this.write(`tune: run ${this.done + 1} of ${this.total}: ${what}; ${this.left()}`);
  }

  end(outcome: string): void {
    const took = (Date.now() - this.runStart) / 1000;
    this.overheadS = (this.overheadS * this.done + Math.max(0, took - this.runPlanned)) / (this.done + 1);
    this.done++;
    this.write(`tune:   ${outcome}`);
  }

  /** About how long the runs not yet finished take. */
  left(): string {
    const overhead = this.done === 0 ? 5 : this.overheadS;
    const s = this.plannedS.slice(this.done).reduce((n, p) => n + p + overhead, 0);
    return `about ${s >= 90 ? `${Math.round(s / 60)} min` : `${Math.round(s)} s`} left`;
  }

  elapsed(): string {
    return `${Math.round((Date.now() - this.started) / 1000)} s`;
  }
}

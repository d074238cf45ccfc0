// The progress line of a long import on a terminal (issue 21): records, records per second and the percent of the
// file read, rewritten in place at most once a second. Not on a pipe or a file: there the report alone is written.

export class Progress {
  private records = 0;
  private bytes = 0;
  private readonly started = Date.now();
  private lastDrawn = 0;
  private shown = false;

  constructor(
    private readonly err: { write(text: string): unknown; isTTY?: boolean },
    private readonly size: number | undefined,
  ) {}

  advance(bytesRead: number): void {
    this.records++;
    this.bytes = bytesRead;
    if (this.err.isTTY !== true) return;
    const now = Date.now();
    if (now - this.lastDrawn < 1000) return;
    this.lastDrawn = now;
    const rate = Math.round(this.records / Math.max((now - this.started) / 1000, 0.001));
    const pct = this.size === undefined || this.size === 0 ? '' : `, ${((100 * this.bytes) / this.size).toFixed(1)}% of the file`;
    this.err.write(`\r\x1b[K${this.records} records, ${rate} records/s${pct}`);
    this.shown = true;
  }

  /** A line of its own (a refusal): the progress line is cleared first and drawn again at the next advance. */
  print(line: string): void {
    this.clear();
    this.err.write(line + '\n');
  }

  done(): void {
    this.clear();
  }

  private clear(): void {
    if (!this.shown) return;
    this.err.write('\r\x1b[K');
    this.shown = false;
    this.lastDrawn = 0;
  }
}

// The stream read line by line with bounded memory (seed 001 §2.5: NDJSON): a line is held only until it is
// written, the input is read only as fast as records are written (the caller awaits each line), and a line longer
// than the bound is skipped to its end and reported, never held. A last line without its newline is given as
// `unterminated`: a stream cut in the middle of a line ends so.

export interface StreamLine {
  /** 1-based line number in the stream. */
  no: number;
  /** The line's text, UTF-8 decoded (undefined when too long or not UTF-8: `problem` says which). */
  text?: string;
  problem?: string;
  /** The stream ended inside this line (no newline after it). */
  unterminated: boolean;
  /** Bytes of the stream read up to the end of this line. */
  bytesRead: number;
}

const decoder = new TextDecoder('utf-8', { fatal: true });

export async function* streamLines(input: AsyncIterable<Buffer | string>, maxLineBytes: number): AsyncGenerator<StreamLine> {
  let parts: Buffer[] = [];
  let held = 0;
  let tooLong = false;
  let no = 0;
  let bytesRead = 0;
  const finish = (unterminated: boolean): StreamLine => {
    no++;
    const line: StreamLine = { no, unterminated, bytesRead };
    if (tooLong) line.problem = `the line is longer than ${maxLineBytes} bytes`;
    else {
      let buf = parts.length === 1 ? parts[0]! : Buffer.concat(parts, held);
      if (buf.length > 0 && buf[buf.length - 1] === 0x0d) buf = buf.subarray(0, buf.length - 1);
      try {
        line.text = decoder.decode(buf);
      } catch {
        line.problem = 'the line is not UTF-8';
      }
    }
    parts = [];
    held = 0;
    tooLong = false;
    return line;
  };
  for await (const chunk of input) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    let start = 0;
    for (;;) {
      const nl = buf.indexOf(0x0a, start);
      const end = nl < 0 ? buf.length : nl;
      bytesRead += end - start + (nl < 0 ? 0 : 1);
      if (!tooLong) {
        if (held + end - start > maxLineBytes) {
          tooLong = true;
          parts = [];
          held = 0;
        } else if (end > start) {
          // A copy: the chunk's memory is the stream's, and a line may outlive it.
          parts.push(Buffer.from(buf.subarray(start, end)));
          held += end - start;
        }
      }
      if (nl < 0) break;
      yield finish(false);
      start = nl + 1;
    }
  }
  if (held > 0 || tooLong) yield finish(true);
}

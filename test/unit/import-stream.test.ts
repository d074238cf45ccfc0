// The importer's reading of the stream (src/migrate/import/line-reader.ts, name-rule.ts, progress.ts): lines across
// chunks, CR LF, multi-byte characters split between chunks, invalid UTF-8, an over-long line skipped without being
// held, a last line without newline; the input pulled only as fast as lines are consumed (memory flat over any
// length); the q scan of the name rule; the progress line only on a terminal.
import t from 'tap';
import { streamLines } from '../../src/migrate/import/line-reader.js';
import { NameRule, qAttributeNames } from '../../src/migrate/import/name-rule.js';
import { Progress } from '../../src/migrate/import/progress.js';

async function collect(chunks: Array<string | Buffer>, max = 1024): Promise<Array<Record<string, unknown>>> {
  const out = [];
  for await (const l of streamLines(
    (async function* () {
      yield* chunks.map((c) => (typeof c === 'string' ? Buffer.from(c) : c));
    })(),
    max,
  ))
    out.push({ ...l });
  return out;
}

t.test('lines across chunks, CR LF, UTF-8 split between chunks', async (t) => {
  const euro = Buffer.from('€'); // 3 bytes
  const lines = await collect(['ab', 'c\r\nd', 'e\n', Buffer.concat([Buffer.from('x'), euro.subarray(0, 1)]), euro.subarray(1), '\n']);
  t.same(
    lines.map((l) => [l.no, l.text, l.unterminated]),
    [
      [1, 'abc', false],
      [2, 'de', false],
      [3, 'x€', false],
    ],
  );
  t.equal(lines.at(-1)!.bytesRead, 3 + 2 + 3 + 1 + 3 + 1);
});

t.test('invalid UTF-8, an over-long line, a last line without newline', async (t) => {
  const lines = await collect([Buffer.from([0x61, 0xff, 0x0a]), 'x'.repeat(600), 'y'.repeat(600), '\nok\nlast'], 1000);
  t.same(
    lines.map((l) => [l.no, l.text, l.problem, l.unterminated]),
    [
      [1, undefined, 'the line is not UTF-8', false],
      [2, undefined, 'the line is longer than 1000 bytes', false],
      [3, 'ok', undefined, false],
      [4, 'last', undefined, true],
    ],
  );
});

t.test('the input is pulled only as lines are consumed: memory is flat over any length of stream', async (t) => {
  let produced = 0;
  const line = Buffer.from(JSON.stringify({ kind: 'entity', data: { id: 'urn:x', pad: 'p'.repeat(200) } }) + '\n');
  const chunk = Buffer.concat(Array.from({ length: 100 }, () => line));
  const input = (async function* () {
    for (let i = 0; i < 2000; i++) {
      produced++;
      yield chunk;
    }
  })();
  let consumed = 0;
  let lost = 0;
  let maxAhead = 0;
  for await (const l of streamLines(input, 1 << 20)) {
    consumed++;
    // Chunks produced beyond those the lines consumed so far fill: at most the one being split.
    maxAhead = Math.max(maxAhead, produced - Math.ceil(consumed / 100));
    if (l.text === undefined) lost++;
    if (consumed % 50_000 === 0) await new Promise((r) => setImmediate(r));
  }
  t.equal(lost, 0, 'every line whole');
  t.equal(consumed, 200_000, `${((chunk.length * 2000) / 1e6).toFixed(0)} MB read`);
  t.ok(maxAhead <= 1, `the reader ran at most ${maxAhead} chunk ahead of the lines consumed`);
});

t.test('q names: attribute paths with %2E for the dots of an IRI, Sub-Attributes, compound paths, values skipped', async (t) => {
  t.same(qAttributeNames('https://example%2Eorg/temperature>20;https://example%2Eorg/name=="a;b|c)"'), [
    'https://example.org/temperature',
    'https://example.org/name',
  ]);
  t.same(qAttributeNames('(https://ex%2Eorg/t.https://ex%2Eorg/unit=="C"|https://ex%2Eorg/address[city.x]=="B");!https://ex%2Eorg/open'), [
    'https://ex.org/t',
    'https://ex.org/unit',
    'https://ex.org/address',
    'https://ex.org/open',
  ]);
  t.same(qAttributeNames('temperature!~="x"'), ['temperature']);
  const rule = new NameRule(new Set(['location']));
  t.same(rule.violations('subscription', { q: 'https://ex%2Eorg/a>1;location==1;temp<2', watchedAttributes: ['ex:t', 'location'] }), [
    { where: 'watchedAttributes', name: 'ex:t' },
    { where: 'q', name: 'temp' },
  ]);
  t.same(
    rule.violations('entity', {
      id: 'urn:x',
      type: ['https://ex.org/T', 'T'],
      'https://ex.org/a': { type: 'Property', value: { short: 1 } },
    }),
    [{ where: 'entity type', name: 'T' }],
    'member names inside a compound value are not checked',
  );
});

t.test('the progress line: on a terminal only, cleared before a refusal line and at the end', async (t) => {
  const written: string[] = [];
  const tty = new Progress({ write: (s: string) => written.push(s), isTTY: true }, 1000);
  tty.advance(500);
  t.match(written[0], /^\r\x1b\[K1 records, \d+ records\/s, 50\.0% of the file$/);
  tty.print('line 2: refused');
  t.same(written.slice(1), ['\r\x1b[K', 'line 2: refused\n']);
  tty.advance(1000);
  tty.done();
  t.equal(written.at(-1), '\r\x1b[K');
  const piped: string[] = [];
  const pipe = new Progress({ write: (s: string) => piped.push(s) }, 1000);
  pipe.advance(10);
  pipe.print('line 1: x');
  pipe.done();
  t.same(piped, ['line 1: x\n']);
});

// The CORS module (src/front/cors.ts): --corsOrigin read as a browser serializes an origin, and the headers an answer
// and a preflight get; nothing of the request's Origin is ever written back.
import t from 'tap';
import { CorsPolicy, CORS_ALLOW_HEADERS, CORS_EXPOSE_HEADERS, parseCorsOrigin } from '../../src/front/cors.js';
import { OptionError } from '../../src/options.js';

t.test('parseCorsOrigin: __ALL and * are any origin; an origin is kept as a browser sends it', async (t) => {
  t.equal(parseCorsOrigin('__ALL'), '*');
  t.equal(parseCorsOrigin('*'), '*');
  t.equal(parseCorsOrigin('https://dash.example.org'), 'https://dash.example.org');
  t.equal(parseCorsOrigin('HTTPS://Dash.Example.ORG/'), 'https://dash.example.org', 'lower case, no trailing slash');
  t.equal(parseCorsOrigin('https://dash.example.org:443'), 'https://dash.example.org', 'no default port');
  t.equal(parseCorsOrigin('http://dash.example.org:80'), 'http://dash.example.org');
  t.equal(parseCorsOrigin('http://dash.example.org:443'), 'http://dash.example.org:443', 'another port stays');
  t.equal(parseCorsOrigin('http://127.0.0.1:3000'), 'http://127.0.0.1:3000');
  t.equal(parseCorsOrigin('http://[::1]:3000'), 'http://[::1]:3000');
});

t.test('parseCorsOrigin refuses anything that is no origin, naming the option', async (t) => {
  for (const text of [
    '',
    '__all',
    'dash.example.org',
    'https://',
    'https://dash.example.org/app',
    'https://dash.example.org?x',
    'https://user@dash.example.org',
    'ftp://dash.example.org',
    'https://dash.example.org:70000',
    'https://a.org https://b.org',
    'https://dash.example.org\r\nX-Evil: 1',
    'https://dash.exämple.org',
    'null',
  ]) {
    let error: unknown;
    try {
      parseCorsOrigin(text);
    } catch (e) {
      error = e;
    }
    t.ok(error instanceof OptionError, `${JSON.stringify(text)} is refused as a bad option value`);
    t.match((error as Error).message, /^--corsOrigin: '.*' is not an origin \(http\[s\]:\/\/host\[:port\]\) nor __ALL$/s);
  }
  t.throws(
    () => parseCorsOrigin('x'.repeat(5000)),
    { message: /^--corsOrigin: 'x{100}' is not an origin/ },
    'a long value is cut in the message',
  );
});

t.test('any origin: * on answers to a request with Origin, whatever it holds; nothing without Origin', async (t) => {
  const cors = new CorsPolicy('*', 86400);
  for (const origin of ['https://dash.example.org', 'null', 'https://x"\r\nSet-Cookie: a=b']) {
    const headers: string[] = [];
    cors.answer(origin, headers);
    t.same(headers, ['Access-Control-Allow-Origin', '*', 'Access-Control-Expose-Headers', CORS_EXPOSE_HEADERS]);
  }
  const none: string[] = [];
  cors.answer(undefined, none);
  t.same(none, []);
});

t.test('one origin: that origin answered with the configured text, Vary: Origin on every answer', async (t) => {
  const cors = new CorsPolicy('https://dash.example.org', 600);
  const ok = ['Allow', 'GET'];
  cors.answer('https://dash.example.org', ok);
  t.same(ok, [
    'Allow',
    'GET',
    'Vary',
    'Origin',
    'Access-Control-Allow-Origin',
    'https://dash.example.org',
    'Access-Control-Expose-Headers',
    CORS_EXPOSE_HEADERS,
  ]);
  for (const origin of [undefined, 'https://evil.example.com', 'HTTPS://DASH.EXAMPLE.ORG', 'https://dash.example.org ']) {
    const headers: string[] = [];
    cors.answer(origin, headers);
    t.same(headers, ['Vary', 'Origin'], String(origin));
  }
});

t.test('a preflight from an allowed origin gets the methods, the API request headers and Max-Age; another none', async (t) => {
  const cors = new CorsPolicy('https://dash.example.org', 600);
  const headers: string[] = [];
  cors.preflight('https://dash.example.org', 'GET, HEAD, OPTIONS', headers);
  t.same(headers, [
    'Access-Control-Allow-Methods',
    'GET, HEAD, OPTIONS',
    'Access-Control-Allow-Headers',
    CORS_ALLOW_HEADERS,
    'Access-Control-Max-Age',
    '600',
  ]);
  const other: string[] = [];
  cors.preflight('https://evil.example.com', 'GET, HEAD, OPTIONS', other);
  t.same(other, []);
});

// --brokerUrl (README "Options"): the broker's public origin, written into the URLs of the @contexts it serves, so
// only an origin is taken, normalized as a browser writes one; anything else stops the broker at start.
import t from 'tap';
import { OptionError, parseBrokerUrl } from '../../src/options.js';

t.test('an origin is taken in lower case, without a trailing slash or the default port of its scheme', async (t) => {
  t.equal(parseBrokerUrl('https://broker.example.org'), 'https://broker.example.org');
  t.equal(parseBrokerUrl('HTTPS://Broker.Example.org:443/'), 'https://broker.example.org');
  t.equal(parseBrokerUrl('http://broker.example.org:80'), 'http://broker.example.org');
  t.equal(parseBrokerUrl('http://broker.example.org:8443'), 'http://broker.example.org:8443');
  t.equal(parseBrokerUrl('https://10.0.0.7:1026'), 'https://10.0.0.7:1026');
  t.equal(parseBrokerUrl('http://[2001:db8::1]:1026'), 'http://[2001:db8::1]:1026');
});

t.test('anything but http[s]://host[:port] is an OptionError naming the option', async (t) => {
  const bad = [
    '',
    'broker.example.org',
    'ftp://broker.example.org',
    'https://',
    'https://broker.example.org/ngsi',
    'https://broker.example.org/?a=1',
    'https://broker.example.org#x',
    'https://broker.example.org:99999',
    'https://broker.example.org:',
    'https://bad host',
    'https://user@broker.example.org',
    'https://broker.example.org\r\nX-Evil: 1',
    'https://-broker.example.org',
    `https://${'a'.repeat(300)}.org`,
  ];
  for (const text of bad) {
    let error: unknown;
    try {
      parseBrokerUrl(text);
    } catch (e) {
      error = e;
    }
    t.ok(error instanceof OptionError, JSON.stringify(text));
    t.match((error as Error | undefined)?.message, /^--brokerUrl: .* is not http\[s\]:\/\/host\[:port\]/s, JSON.stringify(text));
  }
});

// Subscription validation (CIM 009 v1.8 §5.2.12, §5.8.2) as a pure function: defaults and generated ids, the
// transports a thread knows (mqtt once the bridge adds it), PATCH merging and what it keeps.
import t from 'tap';
import { validateSubscription, patchSubscription, type ValidateOptions } from '../../src/ngsild/subscription/validate.js';
import { renderSubscription, subscriptionStatus, notificationStatus } from '../../src/ngsild/subscription/model.js';

const NOW = Date.parse('2025-06-01T00:00:00Z');
const opts: ValidateOptions = { expand: (t) => `https://example.org/${t}`, schemes: new Set(['http', 'https']), now: NOW };
const base = { type: 'Subscription', entities: [{ type: 'Car' }], notification: { endpoint: { uri: 'http://r.example/n' } } };

t.test('a valid subscription gets an id, keeps what was given, and ignores the computed members', async (t) => {
  const b = validateSubscription({ ...base, status: 'expired', notification: { ...base.notification, timesSent: 99 } }, opts);
  t.match(b.id, /^urn:ngsi-ld:Subscription:[0-9a-f-]{36}$/);
  t.same(b.entities, [{ type: 'Car' }]);
  t.notOk('status' in b);
  t.notOk('timesSent' in b.notification);
});

t.test('mqtt endpoints are refused until a transport adds the scheme (seed 001 §7)', async (t) => {
  const mqtt = { ...base, notification: { endpoint: { uri: 'mqtt://broker.example:1883/topic' } } };
  t.throws(() => validateSubscription(mqtt, opts), { detail: /MQTT bridge/ });
  const withBridge = validateSubscription(mqtt, { ...opts, schemes: new Set(['http', 'https', 'mqtt', 'mqtts']) });
  t.equal(withBridge.notification.endpoint.uri, 'mqtt://broker.example:1883/topic');
});

t.test(
  'PATCH replaces the members it gives, notification whole; removes null members; keeps a past expiresAt it was not given',
  async (t) => {
    const current = validateSubscription(
      {
        ...base,
        q: 'a>1',
        expiresAt: '2025-07-01T00:00:00Z',
        notification: { format: 'concise', endpoint: { uri: 'http://r.example/n' } },
      },
      opts,
    );
    const later = { ...opts, now: Date.parse('2025-08-01T00:00:00Z') };
    const patched = patchSubscription(
      current,
      { q: null, notification: { sysAttrs: true, endpoint: { uri: 'http://r.example/m' } } },
      later,
    );
    t.notOk('q' in patched);
    t.same(
      patched.notification,
      { sysAttrs: true, endpoint: { uri: 'http://r.example/m' } },
      'CIM 009 §5.5.8: the member is replaced, its format is not kept',
    );
    // CIM 009 §5.8.2.4: the fragment's members meet §5.2.12, and NotificationParams need an endpoint (§5.2.14).
    t.throws(() => patchSubscription(current, { notification: { format: 'keyValues' } }, later), { detail: /notification\.endpoint/ });
    t.throws(() => patchSubscription(current, { notification: { format: 'keyValues', endpoint: null } }, later), {
      detail: /notification\.endpoint/,
    });
    t.throws(
      () => patchSubscription(current, { notification: null }, later),
      { detail: /notification/ },
      'a mandatory member cannot be removed',
    );
    t.equal(patched.expiresAt, '2025-07-01T00:00:00Z', 'an expired subscription can still be updated');
    t.throws(() => patchSubscription(current, { expiresAt: '2025-07-15T00:00:00Z' }, later), { detail: /expiresAt/ });
    t.throws(() => patchSubscription(current, { watchedAttributes: ['a'], timeInterval: 3 }, opts), { detail: /timeInterval/ });
  },
);

t.test('status is computed: expired, paused, active; the notification status follows the last attempt', async (t) => {
  const b = validateSubscription({ ...base, expiresAt: '2025-06-02T00:00:00Z' }, opts);
  t.equal(subscriptionStatus(b, NOW), 'active');
  t.equal(subscriptionStatus(b, Date.parse('2025-06-03T00:00:00Z')), 'expired');
  t.equal(subscriptionStatus({ ...b, isActive: false }, NOW), 'paused');
  t.equal(notificationStatus(undefined), undefined, 'no attempt yet, no status');
  t.equal(
    notificationStatus({ timesSent: 2, timesFailed: 1, lastSuccess: '2025-01-01T00:00:01Z', lastFailure: '2025-01-01T00:00:00Z' }),
    'ok',
  );
  t.equal(
    notificationStatus({ timesSent: 2, timesFailed: 1, lastSuccess: '2025-01-01T00:00:00Z', lastFailure: '2025-01-01T00:00:01Z' }),
    'failed',
  );
  const shown = renderSubscription(
    { body: b, context: null, createdAt: 'c', modifiedAt: 'm' },
    { timesSent: 3, timesFailed: 0, lastSuccess: 'x', lastNotification: 'x' },
    NOW,
    false,
  );
  t.match(shown, {
    status: 'active',
    isActive: true,
    notification: { timesSent: 3, timesFailed: 0, status: 'ok', lastSuccess: 'x', format: 'normalized' },
  });
  t.notOk('lastErrorReason' in (shown.notification as object), 'the failure reason is not a member of NotificationParams');
});

t.test(
  'before its first notification a subscription shows no counters and no notification status; the default triggers are shown',
  async (t) => {
    const b = validateSubscription(base, opts);
    const fresh = renderSubscription({ body: b, context: null, createdAt: 'c', modifiedAt: 'm' }, undefined, NOW, false);
    const n = fresh.notification as Record<string, unknown>;
    for (const member of ['timesSent', 'timesFailed', 'status', 'lastNotification', 'lastSuccess', 'lastFailure'])
      t.notOk(member in n, member);
    t.same(fresh.notificationTrigger, ['attributeCreated', 'attributeUpdated'], 'CIM 009 §5.2.12 default');
    t.equal(fresh.isActive, true);
    const dropped = renderSubscription(
      { body: b, context: null, createdAt: 'c', modifiedAt: 'm' },
      { timesSent: 0, timesFailed: 1, lastFailure: 'f' },
      NOW,
      false,
    );
    t.match(
      dropped.notification,
      { timesSent: 0, timesFailed: 1, status: 'failed', lastFailure: 'f' },
      'a dropped notification is an attempt',
    );
    const own = renderSubscription(
      { body: { ...b, notificationTrigger: ['entityDeleted'] }, context: null, createdAt: 'c', modifiedAt: 'm' },
      undefined,
      NOW,
      false,
    );
    t.same(own.notificationTrigger, ['entityDeleted'], "a subscription's own triggers as they are");
  },
);

t.test(
  'timeInterval is at least 1 second (each period reads the store on the notifier thread); throttling has no lower bound',
  async (t) => {
    const periodic = (timeInterval: unknown): Record<string, unknown> => ({ ...base, timeInterval });
    for (const bad of [0.001, 0.5, 0.999, 0, -1]) {
      t.throws(
        () => validateSubscription(periodic(bad), opts),
        { kind: 'BadRequestData', detail: /^timeInterval: must be a number of seconds, at least 1, not / },
        String(bad),
      );
    }
    t.equal(validateSubscription(periodic(1), opts).timeInterval, 1, 'the bound itself is accepted');
    t.equal(validateSubscription(periodic(2_592_000), opts).timeInterval, 2_592_000, 'thirty days');
    const current = validateSubscription(periodic(60), opts);
    t.throws(() => patchSubscription(current, { timeInterval: 0.01 }, opts), { detail: /at least 1/ }, 'a PATCH too');
    // throttling only drops notifications closer than it to the last one: no timer, however small.
    t.equal(validateSubscription({ ...base, watchedAttributes: ['a'], throttling: 0.001 }, opts).throttling, 0.001);
  },
);

t.test(
  'notification.join is flat, inline or @none and is kept; joinLevel 1 to 5 only with flat or inline (CIM 009 v1.8.1 §5.2.14)',
  async (t) => {
    const withJoin = (n: Record<string, unknown>) => ({ ...base, notification: { ...base.notification, ...n } });
    t.same(validateSubscription(withJoin({ join: 'flat', joinLevel: 2 }), opts).notification, {
      endpoint: base.notification.endpoint,
      join: 'flat',
      joinLevel: 2,
    });
    t.equal(validateSubscription(withJoin({ join: 'inline' }), opts).notification.join, 'inline');
    t.equal(validateSubscription(withJoin({ join: '@none' }), opts).notification.join, '@none');
    t.equal(validateSubscription(withJoin({ join: 'flat', joinLevel: 5 }), opts).notification.joinLevel, 5);
    for (const bad of [
      { join: 'deep' },
      { join: ['flat'] },
      { join: 'flat', joinLevel: 0 },
      { join: 'flat', joinLevel: 6 },
      { join: 'flat', joinLevel: 2.5 },
      { join: 'inline', joinLevel: '1' },
      { join: 'inline', joinLevel: null },
      { joinLevel: 2 },
      { join: '@none', joinLevel: 1 },
    ])
      t.throws(
        () => validateSubscription(withJoin(bad), opts),
        { kind: 'BadRequestData', status: 400, detail: /notification\.join/ },
        JSON.stringify(bad),
      );
  },
);

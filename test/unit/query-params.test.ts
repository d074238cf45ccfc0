// URL parameters as clients send them: form-encoded `+` is a space (but scopeQ's wildcard), Orion-LD's
// `options=count`, and unknown parameters or options words refused with InvalidRequest (CIM 009 v1.8.1 §6.3.20).
import t from 'tap';
import { QueryParams } from '../../src/pipeline/query-params.js';
import { LdError } from '../../src/ngsild/problem.js';

function errorOf(fn: () => unknown): LdError {
  try {
    fn();
  } catch (err) {
    if (err instanceof LdError) return err;
    throw err;
  }
  throw new Error('did not throw');
}

t.test('+ is a space in names and values, %2B a plus; scopeQ keeps + as its wildcard', async (t) => {
  const q = new QueryParams('q=name%3D%3D%22Eiffel+Tower%22&coordinates=%5B13.3986%2C+52.5547%5D&scopeQ=/Madrid/+/North&a+b=1&plus=1%2B1');
  t.equal(q.get('q'), 'name=="Eiffel Tower"');
  t.equal(q.get('coordinates'), '[13.3986, 52.5547]');
  t.equal(q.get('scopeQ'), '/Madrid/+/North');
  t.equal(q.get('a b'), '1', 'a name is decoded the same way');
  t.equal(q.get('plus'), '1+1');
  t.equal(new QueryParams('scopeQ=/a/%2B').get('scopeQ'), '/a/+', 'an encoded + in scopeQ is the wildcard too');
});

t.test('an unknown parameter and an options word the operation does not support are 400 InvalidRequest', async (t) => {
  const unknown = errorOf(() => new QueryParams('type=Car&colour=red').only(new Set(['type'])));
  t.equal(unknown.kind, 'InvalidRequest');
  t.equal(unknown.status, 400);
  t.match(unknown.detail, /unknown URL parameter 'colour'/);
  const word = errorOf(() => new QueryParams('options=keyValues,sideways').options(['keyValues']));
  t.equal(word.kind, 'InvalidRequest');
  t.match(word.detail, /'sideways' is not one of keyValues/);
  t.equal(errorOf(() => new QueryParams('options=').options(['keyValues'])).kind, 'InvalidRequest', 'an empty word');
});

t.test('options=count is accepted by every operation that takes options, and asks for the count like count=true', async (t) => {
  t.same([...new QueryParams('options=sysAttrs,count').options(['sysAttrs'])].sort(), ['count', 'sysAttrs']);
  t.same([...new QueryParams('options=count').options([])], ['count'], 'even where no other word is');
  t.equal(new QueryParams('options=count').count(), true);
  t.equal(new QueryParams('options=keyValues+,+count').count(), true, 'blanks (a form-encoded +) around the words');
  t.equal(new QueryParams('count=true').count(), true);
  t.equal(new QueryParams('count=false').count(), false);
  t.equal(new QueryParams('options=keyValues').count(), false);
  t.equal(new QueryParams('').count(), false);
  const bad = errorOf(() => new QueryParams('count=yes').count());
  t.equal(bad.kind, 'BadRequestData', 'a value of count other than true or false');
});

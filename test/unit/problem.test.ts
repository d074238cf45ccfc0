import t from 'tap';
import { LdError, ErrorType } from '../../src/ngsild/problem.js';

t.test('an LdError renders as a ProblemDetails with its NGSI-LD type and status', async (t) => {
  const p = new LdError('ResourceNotFound', 'no entity urn:x').toProblem();
  t.equal(p.type, ErrorType.ResourceNotFound);
  t.equal(p.status, 404);
  t.equal(p.detail, 'no entity urn:x');
});

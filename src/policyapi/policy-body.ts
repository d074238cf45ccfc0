// What the policy API accepts as a policy (seed 000 §2.9, §4.1 rules 2 and 3): a JSON object with a non-empty
// string `odrl:uid` whose left operands carry the argument they need. The text is kept exactly as sent.
import { badRequest } from './problem.js';
import { MAX_NESTING, tooDeepAt } from '../ngsild/entity/depth.js';

export interface PolicyBody {
  uid: string;
  /** The policy as the client sent it (seed 000 §4.1 rule 5: the listing's `odrl` is this text). */
  text: string;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Left operands that read a value at a path and so need the path as their argument (seed 000 §5.6), with the
 * parameter's description for the 400. The reference PAP writes the argument either as the member's value
 * (`"http:bodyValue": "$.a.b"`) or as the `@value` of the left operand object
 * (`"odrl:leftOperand": {"@id": "http:bodyValue", "@value": "$.a.b"}`); `dsec` reads both.
 */
const PARAMETER_OF: ReadonlyMap<string, string> = new Map([
  ['http:bodyValue', 'the path of the value in the request body (such as "$.a.b")'],
  ['ovc:leftOperand', 'the path of the value in the credential (such as "credentialSubject.type")'],
]);

const LEFT_OPERAND_KEYS = new Set(['odrl:leftOperand', 'http://www.w3.org/ns/odrl/2/leftOperand']);

/** Parses and checks a request body; throws a 400 PolicyApiError saying what is wrong. */
export function parsePolicyBody(bytes: Uint8Array | null): PolicyBody {
  if (bytes === null || bytes.byteLength === 0) throw badRequest('the body must be a policy: a JSON object with a string odrl:uid');
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw badRequest('the body is not UTF-8 text');
  }
  let policy: unknown;
  try {
    policy = JSON.parse(text);
  } catch (e) {
    throw badRequest(`the body is not JSON: ${(e as Error).message}`);
  }
  if (!isObject(policy)) throw badRequest('the body must be a JSON object (an ODRL policy), not ' + kindOf(policy));
  // dsec compiles policies recursively and skips one nested deeper than this: refused here rather than kept unused.
  if (tooDeepAt(policy, MAX_NESTING) !== undefined) throw badRequest(`the policy is nested deeper than ${MAX_NESTING} levels`);
  if (!Object.hasOwn(policy, 'odrl:uid')) throw badRequest('the policy has no odrl:uid');
  const uid = policy['odrl:uid'];
  if (typeof uid !== 'string') throw badRequest(`the policy's odrl:uid must be a string, not ${kindOf(uid)}`);
  if (uid === '') throw badRequest("the policy's odrl:uid is empty");
  checkLeftOperands(policy);
  return { uid, text };
}

/**
 * Seed 000 §4.1 rule 3: a left operand without its argument is refused (dsec would skip the policy, §5.7
 * difference 3). Every object of the policy is looked at, wherever constraints sit (refinements, constraints,
 * logical constraints), except the @context. Iterative, so a deeply nested body cannot exhaust the stack.
 */
function checkLeftOperands(policy: Record<string, unknown>): void {
  const stack: Array<{ value: unknown; at: string }> = [{ value: policy, at: '' }];
  while (stack.length > 0) {
    const { value, at } = stack.pop()!;
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], at: `${at}[${i}]` });
      continue;
    }
    if (!isObject(value)) continue;
    for (const [key, member] of Object.entries(value)) {
      if (key === '@context') continue;
      if (LEFT_OPERAND_KEYS.has(key)) {
        if (typeof member === 'string' && PARAMETER_OF.has(member)) missing(member, at);
        if (isObject(member) && typeof member['@id'] === 'string' && PARAMETER_OF.has(member['@id']) && !isArgument(member['@value'])) {
          missing(member['@id'], at);
        }
      } else if (PARAMETER_OF.has(key)) {
        const argument = isObject(member) ? member['@value'] : member === key ? undefined : member;
        if (!isArgument(argument)) missing(key, at);
      }
      if (member !== null && typeof member === 'object') stack.push({ value: member, at: at === '' ? key : `${at}.${key}` });
    }
  }
}

function missing(word: string, at: string): never {
  throw badRequest(
    `the left operand '${word}' requires a parameter, ${PARAMETER_OF.get(word)!}, which is missing` +
      ` (constraint at ${at === '' ? 'the top of the policy' : at})`,
  );
}

function isArgument(v: unknown): boolean {
  return typeof v === 'string' && v !== '';
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

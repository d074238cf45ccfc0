// The authorization plugin contract (seed 000 §1, §2.1 to §2.5, §5.1, §5.2, §9): the only thing an auth plugin imports.
// Only plain data and functions cross it; identities are structured-clone-able values.

export type { OptionSpec, OptionValues, PluginHost, PluginLogger } from '../plugin/contract.js';

/** seed 000 §9: append-only; ABI 2 entity hook + identitySave/Restore, ABI 3 authorizeBeforeContext, ABI 4 partial. */
export const AUTH_ABI_VERSION = 4;

export enum AuthVerdict {
  Allow = 0,
  /** 401 with WWW-Authenticate (authenticate only). */
  Unauthenticated = 1,
  /** 403 (authorize, entity). */
  Deny = 2,
  /** 503: the plugin cannot decide; the request is refused, never let in. */
  Unavailable = 3,
}

/** Filled by a hook to explain its verdict; reset by the broker before each hook call. */
export interface AuthAnswer {
  detail?: string;
  title?: string;
  /** ABI 4: set by the entity hook for a read of a whole entity when only some attributes are allowed. */
  partial?: boolean;
  /** Value of the WWW-Authenticate header of a 401 (default `Bearer`). */
  wwwAuthenticate?: string;
}

/** Read-only view of the request given to every hook (seed 000 §2.4). */
export interface AuthRequest {
  readonly method: string;
  readonly path: string;
  /** URL parameters, decoded, in request order. */
  readonly params: ReadonlyArray<readonly [string, string]>;
  /** The NGSI-LD operation's ordinal (LdOp) and its name; 0 / '' for a route that is no NGSI-LD operation. */
  readonly ldOp: number;
  readonly ldOpName: string;
  /** The matched route pattern, e.g. `/ngsi-ld/v1/entities/:entityId`. */
  readonly route: string;
  /** The tenant ('' for the default tenant); null in authenticate. */
  readonly tenant: string | null;
  /** True when the broker will call the entity hook for each entity of this operation (seed 000 §4.3). */
  readonly entities: boolean;
  header(name: string): string | undefined;
  /** The body exactly as the client sent it (null when none). */
  body(): Uint8Array | null;
  /** Expansion with the request's @context: null while the @context is not resolved. */
  expand(term: string): string | null;
  /** Expansion with the broker's default context (core + --defaultUserContext). */
  expandDefault(term: string): string;
}

/** Input of the entity hook (seed 000 §2.5, §5.2). */
export interface AuthEntity {
  id: string;
  /** Expanded types: the body's for a create, the stored entity's otherwise; empty for an entity not stored. */
  types: readonly string[];
  /** Whether `types` are the stored entity's. */
  storedTypes: boolean;
  /** For a write: the expanded attribute names the write names. */
  attrsWritten?: readonly string[];
  /** Set when the broker asks about one attribute alone after a `partial` answer. */
  attribute?: string;
  /** True for a read (retrieve, query, notification), false for a write. */
  read: boolean;
  /**
   * For a write that may create or update (an upsert): whether this one creates the entity. Absent: a write creates
   * exactly when `storedTypes` is false.
   */
  creates?: boolean;
}

export type MaybePromise<T> = T | Promise<T>;

/** The result of authenticate: a verdict and, when allowed, the plugin's identity for this request. */
export interface AuthIdentityOut {
  identity: unknown;
}

/** Filled by the plugin in authRegister (seed 000 §2.1). */
export interface AuthDriver {
  /** The broker writes AUTH_ABI_VERSION here before authRegister; the plugin writes the version it was built for. */
  abiVersion: number;
  name: string;
  authenticate?: (req: AuthRequest, out: AuthIdentityOut, answer: AuthAnswer) => MaybePromise<AuthVerdict>;
  /** Absent: an authenticated request may do anything. */
  authorize?: (req: AuthRequest, identity: unknown, answer: AuthAnswer) => MaybePromise<AuthVerdict>;
  /** ABI 3: true when authorize never calls expand(). */
  authorizeBeforeContext?: boolean;
  /**
   * ABI 2: may `identity` touch this entity in the operation of `req` (seed 000 §5.1, §5.2). Callable for any entity
   * and identity, with or without authorize having been asked about `req` first: a notification asks it for each
   * entity as a retrieve by the subscription's owner (§5.3), with a view whose ldOpName is RetrieveEntity, method GET
   * and tenant the subscription's. A plugin may keep per-request work keyed on the `req` object.
   */
  entity?: (req: AuthRequest, identity: unknown, entity: AuthEntity, answer: AuthAnswer) => MaybePromise<AuthVerdict>;
  release?: (req: AuthRequest, identity: unknown) => void;
  /** ABI 2: identity to text and back (the subscription owner record, seed 000 §2.6). */
  identitySave?: (identity: unknown) => string | null;
  identityRestore?: (text: string) => unknown;
}

/** What an auth plugin module exports: `authRegister` and, optionally, its options table. */
export interface AuthPluginModule {
  authRegister(driver: AuthDriver, host: import('../plugin/contract.js').PluginHost): void | Promise<void>;
  options?: import('../plugin/contract.js').OptionSpec[];
}

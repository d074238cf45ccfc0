// The control route of bench/bare-server.ts, shared with the runner (which must not import the server itself).
export const REPLY_PATH = '/__bare/reply';

/** What the bare server answers; `status` is the full status line text, e.g. "200 OK". */
export interface BareReply {
  status: string;
  headers: Array<[string, string]>;
  body: string;
}

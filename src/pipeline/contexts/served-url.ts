// The broker's address in the URLs of the @contexts it serves (CIM 009 v1.8 §5.13, §6.30, §6.31): --brokerUrl when
// given; else the configured one for what every thread names alike, and the one the client used in its answers.
import { HOSTED_PATH } from '../../ngsild/context/context-resolver.js';
import type { LdRequest } from '../ld-request.js';

/** The configured address of the NGSI-LD API (--host, --port) and --brokerUrl. */
export interface BrokerAddress {
  host: string;
  port: number;
  /** --brokerUrl, as parseBrokerUrl gives it (no trailing slash, no default port). */
  brokerUrl?: string;
}

/**
 * Scheme, host and port of the URLs of the @contexts the broker serves, as the resolver names them: --brokerUrl,
 * else the address the broker listens on (a guess: `--host 0.0.0.0` and `--port 0` name no address a client can use).
 */
export function brokerUrlOf(address: BrokerAddress): string {
  if (address.brokerUrl !== undefined) return address.brokerUrl;
  const host = address.host === '0.0.0.0' || address.host === '::' ? 'localhost' : address.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
}

// A Host header (RFC 9110 §7.2): a name or IPv4 address, or a bracketed IPv6 address, and an optional port.
const HOST_HEADER = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;

/** The broker's address as the request reached it (`http://` and its Host), or undefined when its Host is no host[:port]. */
export function hostBrokerUrl(req: LdRequest): string | undefined {
  const host = req.header('host');
  return host !== undefined && HOST_HEADER.test(host) ? `http://${host}` : undefined;
}

/**
 * The broker's address for the URLs it gives a client: --brokerUrl, else the request's Host, so that the URLs work
 * behind a proxy or a port mapping that keeps it; the configured address when the request has no usable Host.
 */
export function requestBrokerUrl(req: LdRequest, address: BrokerAddress): string {
  return address.brokerUrl ?? hostBrokerUrl(req) ?? brokerUrlOf(address);
}

/**
 * A URL of a @context the broker serves (an ImplicitlyCreated one in a Link header), as the client can reach it: the
 * resolver names it with the configured address, which behind a proxy, a port mapping or `--host 0.0.0.0` is not
 * the one the client used. Any other URL is answered as it is.
 */
export function servedUrl(req: LdRequest, address: BrokerAddress, url: string): string {
  if (!url.includes(HOSTED_PATH)) return url;
  const configured = brokerUrlOf(address);
  return url.startsWith(configured + HOSTED_PATH) ? requestBrokerUrl(req, address) + url.slice(configured.length) : url;
}

// The broker's address in the URLs of the @contexts it serves (CIM 009 v1.8 §5.13, §6.30, §6.31): the configured one
// for what every thread names alike, the one the client used in what a request is answered.
import { HOSTED_PATH } from '../../ngsild/context/context-resolver.js';
import type { LdRequest } from '../ld-request.js';

/** The configured address of the NGSI-LD API (--host, --port). */
export interface BrokerAddress {
  host: string;
  port: number;
}

/** Scheme, host and port of the URLs of the @contexts the broker serves, from its configured address. */
export function brokerUrlOf(address: BrokerAddress): string {
  const host = address.host === '0.0.0.0' || address.host === '::' ? 'localhost' : address.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
}

// A Host header (RFC 9110 §7.2): a name or IPv4 address, or a bracketed IPv6 address, and an optional port.
const HOST_HEADER = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;

/**
 * The broker's address as the client reached it: the request's Host, so that the URLs listed work behind a proxy
 * or a port mapping; the configured address when the request has no usable Host.
 */
export function requestBrokerUrl(req: LdRequest, address: BrokerAddress): string {
  const host = req.header('host');
  return host !== undefined && HOST_HEADER.test(host) ? `http://${host}` : brokerUrlOf(address);
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

/**
 * The rules for a URL a subscriber gives Koerier to call on its behalf: the sink, and the token
 * endpoint of its OAuth2 client credentials. WH-1: calls go over HTTPS; the laptop host alone may
 * name plain-http loopback targets. WH-3: credentials travel in the Authorization header (or the
 * token request's body), never in the URL. Only the allowed ports (443 unless configured): with
 * any port, a subscriber could make Koerier probe the ports of any public host (review item 19).
 * Private addresses are refused when Koerier connects (SSRF guard,
 * `functions/net/safe-http-client.ts`, which applies the same port rule again).
 */

const MAX_URL = 2048;

export interface OutboundUrlRules {
  /** Laptop host: plain http, and any port, to loopback addresses. */
  readonly allowLoopback: boolean;
  /** Ports a URL may name; an https URL without a port means 443. */
  readonly allowedPorts: readonly number[];
  /**
   * The special-purpose range a literal IP address falls in, undefined when Koerier may call it
   * (functions/net/ip-address-policy.ts, the rule the connection itself keeps). With it, a sink
   * written as a private or loopback address is refused when it is given, rather than accepted and
   * then failing its handshake or every delivery.
   */
  readonly refusedAddressRange?: ((address: string) => string | undefined) | undefined;
}

/** Why `text`, the value of member `member`, is not a URL Koerier may call; undefined when it is. */
export function outboundUrlProblem(
  text: string,
  member: string,
  rules: OutboundUrlRules,
): { rule: string; message: string; requirement: string } | undefined {
  if (text.length > MAX_URL)
    return { rule: 'too-long', message: `${member} is at most ${MAX_URL} characters`, requirement: 'EDU-14' };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { rule: 'url', message: `${member} must be an absolute URL`, requirement: 'EDU-14' };
  }
  if (url.username || url.password)
    return { rule: 'no-userinfo', message: `${member} must not carry credentials in the URL`, requirement: 'WH-3' };
  if (url.hash) return { rule: 'no-fragment', message: `${member} must not have a fragment`, requirement: 'EDU-14' };
  const loopback = rules.allowLoopback && isLoopbackHost(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
    return {
      rule: 'https',
      message: rules.allowLoopback
        ? `${member} must be an https URL (plain http only to a loopback address)`
        : `${member} must be an https URL`,
      requirement: 'WH-1',
    };
  }
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  if (!loopback && !rules.allowedPorts.includes(port)) {
    return {
      rule: 'port',
      message: `${member} must use port ${rules.allowedPorts.join(' or ')}, not ${port}`,
      requirement: 'WH-1',
    };
  }
  const address = literalAddress(url.hostname);
  const range = address === undefined || loopback ? undefined : rules.refusedAddressRange?.(address);
  if (range !== undefined) {
    return {
      rule: 'public-address',
      message: `${member} names an address Koerier never calls (${range}); give a public host name or address`,
      requirement: 'WH-1',
    };
  }
  return undefined;
}

/** The IP address a URL's host spells, unbracketed; undefined for a host name. The URL parser has already normalised `0x7f.1` and the like to dotted quads. */
function literalAddress(hostname: string): string | undefined {
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(hostname)) return hostname;
  if (hostname.startsWith('[') && hostname.endsWith(']')) return hostname.slice(1, -1);
  return undefined;
}

export function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

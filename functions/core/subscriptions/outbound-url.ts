/**
 * The rules for a URL a subscriber gives Koerier to call on its behalf: the sink, and the token
 * endpoint of its OAuth2 client credentials. WH-1: calls go over HTTPS; the laptop host alone may
 * name plain-http loopback targets. WH-3: credentials travel in the Authorization header (or the
 * token request's body), never in the URL. Private addresses are refused when Koerier connects
 * (SSRF guard, `functions/net/safe-http-client.ts`).
 */

const MAX_URL = 2048;

/** Why `text`, the value of member `member`, is not a URL Koerier may call; undefined when it is. */
export function outboundUrlProblem(text: string, member: string, allowLoopback: boolean): { rule: string; message: string; requirement: string } | undefined {
  if (text.length > MAX_URL) return { rule: 'too-long', message: `${member} is at most ${MAX_URL} characters`, requirement: 'EDU-14' };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { rule: 'url', message: `${member} must be an absolute URL`, requirement: 'EDU-14' };
  }
  if (url.username || url.password) return { rule: 'no-userinfo', message: `${member} must not carry credentials in the URL`, requirement: 'WH-3' };
  if (url.hash) return { rule: 'no-fragment', message: `${member} must not have a fragment`, requirement: 'EDU-14' };
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && allowLoopback && isLoopbackHost(url.hostname)) return undefined;
  return {
    rule: 'https',
    message: allowLoopback ? `${member} must be an https URL (plain http only to a loopback address)` : `${member} must be an https URL`,
    requirement: 'WH-1',
  };
}

function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

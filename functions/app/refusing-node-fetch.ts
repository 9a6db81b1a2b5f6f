/**
 * What the bundles get in place of node-fetch (lib/bundling.ts aliases the package to this file):
 * a fetch that refuses every URL. The libraries under @asyncapi/parser import node-fetch to read
 * external `$ref`s and rulesets; the contract register follows no external reference (its
 * resolvers refuse http, https and file, ./contract-parsers.ts), so nothing in a function needs
 * it. Should a path past those resolvers ever reach it, a document still cannot make the register
 * request `http://169.254.169.254/…` (SSRF). It also keeps whatwg-url and tr46 (about 300 KB) out
 * of the bundle. Tests and the laptop run the package itself, behind the same resolvers.
 */
export class FetchRefused extends Error {
  override readonly name = 'FetchRefused';
}

export default function refusingFetch(url: unknown): Promise<never> {
  const target = typeof url === 'string' ? url : url instanceof URL ? url.href : 'a request';
  return Promise.reject(
    new FetchRefused(
      `${target} was not fetched: Koerier's functions follow no external reference (put the schema in the document)`,
    ),
  );
}

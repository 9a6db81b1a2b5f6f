/**
 * The name resolution the safe HTTP client connects with (safe-http-client.ts): the SSRF guard's
 * first check, on every address a name resolves to for this very connection.
 */
import type { LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import type { OutboundRequestError } from './outbound-errors.js';

/**
 * Resolves as `lookup` does, but refuses the name if ANY address it resolves to is refused: a
 * name that mixes public and private answers is a rebinding attempt, not a target.
 */
export function guardedLookup(
  lookup: LookupFunction,
  refusal: (address: string) => OutboundRequestError | undefined,
): LookupFunction {
  return (hostname, options, callback) => {
    lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const list = (Array.isArray(addresses) ? addresses : [{ address: addresses, family: 4 }]) as LookupAddress[];
      for (const { address } of list) {
        const refused = refusal(address);
        if (refused) {
          refused.message = `${hostname} resolves to ${address}: ${refused.message}`;
          return callback(refused as NodeJS.ErrnoException, '', 0);
        }
      }
      if (list.length === 0)
        return callback(Object.assign(new Error(`${hostname} has no addresses`), { code: 'ENOTFOUND' }), '', 0);
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      const [first] = list as [LookupAddress];
      callback(null, first.address, first.family);
    });
  };
}

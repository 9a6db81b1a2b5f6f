/**
 * Ordered delivery's test traffic (issue 33): events of several keys as the router marks them for
 * an ordered subscription (the unit tests of test/unit/ordering), and as publishers send them over
 * several connections at once (the laptop-host tests of test/e2e/ordered-*).
 */
import { Agent } from 'undici';
import type { DeliveryMessage } from '../../functions/core/delivery-message/delivery-message.js';
import { apiAs, publishEvent } from './koerier-api.js';

/**
 * Marked deliveries of `keys` keys (`k0`, `k1`, …), events `from` … `from + perKey - 1` of each,
 * interleaved over the keys as concurrent publishers would send them, each key's own in order and
 * each accepted a millisecond after the one before (its acceptance position from `acceptedAt`, ms).
 * Each event carries `partitionkey` and its number `n`.
 */
export function keyedDeliveries(
  subscriptionId: string,
  keys: number,
  perKey: number,
  acceptedAt: number,
  from = 1,
): DeliveryMessage[] {
  const messages: DeliveryMessage[] = [];
  let position = acceptedAt * 1000;
  for (let n = from; n < from + perKey; n++)
    for (let k = 0; k < keys; k++)
      messages.push({
        version: 1,
        deliveryId: `d-${k}-${n}`,
        subscriptionId,
        events: [
          JSON.stringify({ specversion: '1.0', id: `${k}-${n}`, source: 'urn:s', type: 't', partitionkey: `k${k}`, n }),
        ],
        createdAt: acceptedAt,
        ordering: { key: `k${k}`, position: (position += 1000) },
      });
  return messages;
}

/**
 * Publishes `events` events to each of `keys` keys (`key-0`, …) over `connections` connections at
 * once: connection c owns keys c, c + connections, …, and sends event n of each of its keys, then
 * event n + 1, each request after the previous one's 202. Each event's data is `{n}`.
 */
export async function publishKeysInTurn(
  url: string,
  token: string,
  options: { source: string; type: string; keys: number; events: number; connections: number },
): Promise<void> {
  const { source, type, keys, events, connections } = options;
  await Promise.all(
    Array.from({ length: connections }, async (_, c) => {
      // One connection each: Node's fetch takes the undici package's Agent as its dispatcher (their types differ).
      const agent = new Agent({ connections: 1 });
      const api = apiAs(url, token, {
        fetch: (request: Request) => fetch(request, { dispatcher: agent } as unknown as RequestInit),
      });
      const own = Array.from({ length: keys }, (_, k) => k).filter((k) => k % connections === c);
      try {
        for (let n = 1; n <= events; n++)
          for (const k of own) await publishEvent(api, { source, type, partitionkey: `key-${k}`, data: { n } });
      } finally {
        await agent.close();
      }
    }),
  );
}

/**
 * The erasure's reach into ordered lanes (issue 31 item 4 × issue 33; docs/PRIVACY.md, "Erasure"):
 * an ordered subscription's events wait in its lanes, behind the head of their key or behind a
 * parked one, for as long as that takes — so an erasure must take them there too.
 *
 * A staged event (not yet numbered) is removed outright: the lane never gave it a number. A
 * numbered one cannot simply go, or its lane would wait at its number forever; it is stored again
 * without the taken events, and one left with none is passed over when its turn comes
 * (ordered-dispatch.ts): the receiver sees the gap in `sequence`, as after a skip.
 */
import { decodeDeliveryMessage, encodeDeliveryMessage } from '../delivery-message/delivery-message.js';
import type { ErasableLanes } from './ports.js';

/** Answers how many events it took out of the lanes. */
export async function eraseOrderedLanes(
  lanes: ErasableLanes,
  take: (json: string) => Promise<boolean>,
): Promise<number> {
  let taken = 0;
  let cursor: string | undefined;
  do {
    const page = await lanes.waiting(cursor);
    for (const waiting of page.items) {
      const message = decodeDeliveryMessage(waiting.body);
      const keep: string[] = [];
      for (const json of message.events) if (!(await take(json))) keep.push(json);
      if (keep.length === message.events.length) continue;
      taken += message.events.length - keep.length;
      if (waiting.state === 'staged' && keep.length === 0) await lanes.remove(waiting);
      else await lanes.rewrite(waiting, encodeDeliveryMessage({ ...message, events: keep }));
    }
    cursor = page.cursor;
  } while (cursor !== undefined);
  return taken;
}

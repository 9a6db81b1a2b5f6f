/**
 * The claim check on a receive (EDU-1, docs/PULL.md): the events of a pull subscription go out as
 * they do to a push subscriber — data inline again up to the subscription's `maxinlinebytes`, else
 * `dataref` with the owner recorded as a reader, so their fetch is allowed. Events that never went
 * by reference come back byte for byte as accepted (CE-13).
 *
 * The answer is bounded (Lambda's 6 MB response), so the events are read in rounds planned by
 * their expected size, and reading stops once the answer is full: a receive of 100 events of 2 MB
 * reads about three objects, not a hundred. The caller returns the rest to the queue. An event
 * whose inline text would not fit an answer on its own goes by reference instead of never leaving.
 */
import {
  expectedOutgoingBytes,
  outgoingEvents,
  type OutgoingEventsDependencies,
} from '../claim-check/outgoing-events.js';
import { answerBytesOf, fitsOneAnswer, MAX_ANSWER_BYTES } from './receive-assembly.js';

/** The leading `events` as they go to `subscription`; fewer when the rest cannot fit the answer. Throws ClaimCheckUnavailableError. */
export async function receivedEvents(
  subscription: { readonly owner: string; readonly maxInlineBytes?: number },
  events: readonly string[],
  deps: Omit<OutgoingEventsDependencies, 'fits'>,
  maxBytes = MAX_ANSWER_BYTES,
): Promise<string[]> {
  const limit = subscription.maxInlineBytes ?? deps.defaultMaxInlineBytes;
  const outgoing = { ...deps, fits: (inline: string) => fitsOneAnswer(inline, maxBytes) };
  const result: string[] = [];
  let used = 0;
  while (result.length < events.length && used <= maxBytes) {
    // At least one event per round; more while their expected sizes fit what is left.
    let end = result.length + 1;
    let expected = expectedOutgoingBytes(events[result.length]!, limit, deps.publicBaseUrl);
    while (end < events.length) {
      const next = expectedOutgoingBytes(events[end]!, limit, deps.publicBaseUrl);
      if (used + expected + next > maxBytes) break;
      expected += next;
      end++;
    }
    const round = await outgoingEvents(subscription, events.slice(result.length, end), outgoing);
    result.push(...round);
    used += round.reduce((sum, event) => sum + answerBytesOf(event), 0);
  }
  return result;
}

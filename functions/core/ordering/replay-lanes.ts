/**
 * A replay's own lanes (issue 33: "Replays of an ordered subscription are in order per key too";
 * docs/ORDERING.md, "Replays"). A replay of an ordered subscription puts each key's events in a
 * lane of its own, (subscription, replay, key), beside the key's live lane: the replay neither
 * waits behind the live lane's head nor moves it, and its `sequence` counts from 1 in the replay.
 *
 * The lane is told apart from the live one by its key alone, so everything that takes, advances or
 * parks a lane (the delivery function, a pull receive and its acknowledgement) works on it unchanged:
 * the key starts with a control character, which no accepted event's attribute may hold (the
 * ingest refuses them, CE string type), so it can never be a live key.
 */

const MARK = '\u001f';

/** The lane key of `key`'s events in replay `replayId`. */
export function replayLaneKey(replayId: string, key: string): string {
  return `${MARK}replay${MARK}${replayId}${MARK}${key}`;
}

/**
 * The lane of a redriven dead letter's event: the replay's own lane when the dead letter was a
 * replayed event (its `replay` mark, kept by the dead letter and its redrive), else the live one.
 */
export function redrivenLaneKey(
  message: { readonly replay?: { readonly id: string } | undefined },
  key: string,
): string {
  return message.replay === undefined ? key : replayLaneKey(message.replay.id, key);
}

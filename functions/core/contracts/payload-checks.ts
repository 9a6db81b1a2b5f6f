/**
 * What the register checks in each message's payload schema before it is stored for the ingest
 * (issue 28, item 6): its size with every `$ref` resolved, as the ingest compiles it, within
 * `PAYLOAD_CAP`; and every regular expression in it runnable by RE2, the linear-time engine the
 * ingest runs them with (./linear-patterns.ts). A refusal here is a 400 at publish time, where
 * the partner can fix it, instead of a stalled or failing ingest later.
 */
import { expansionRefusal, PAYLOAD_CAP } from './expanded-size.js';
import { patternsOf, unrunnablePattern } from './linear-patterns.js';
import type { ParserFinding } from './ports.js';

/** Findings enough to fix a document, as the parsers' are bounded. */
const MAX_FINDINGS = 50;

export function payloadFindings(
  messages: readonly { readonly id: string; readonly payload?: unknown }[],
): ParserFinding[] {
  const findings: ParserFinding[] = [];
  for (const message of messages) {
    if (message.payload === undefined) continue;
    const tooLarge = expansionRefusal(message.payload, PAYLOAD_CAP, `the payload schema of message "${message.id}"`);
    if (tooLarge) {
      findings.push({ message: tooLarge, rule: 'payload-expansion-cap', severity: 'error' });
      continue;
    }
    for (const { pointer, source } of patternsOf(message.payload)) {
      const why = unrunnablePattern(source);
      if (why === undefined) continue;
      findings.push({
        message: `message "${message.id}", payload ${pointer}: the regular expression ${JSON.stringify(source.slice(0, 200))} cannot run in linear time (RE2: ${why}); back-references and look-arounds are not supported`,
        rule: 'pattern-not-linear',
        severity: 'error',
      });
    }
  }
  return findings.slice(0, MAX_FINDINGS);
}

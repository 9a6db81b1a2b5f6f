/**
 * The one answer to a body that is not JSON, whichever route it came to (issue 29 item 2): before,
 * five wordings under three problem types. Apart from the schemas (json-body.ts) so that the
 * ingest, which reads CloudEvents with its own parser, answers the same without loading them.
 */
import { problem, type Problem } from './problems.js';

/** The parser's own message is never passed on: V8 quotes part of the input, which may be data. */
export const MALFORMED_JSON_DETAIL = 'The body is not valid JSON (RFC 8259).';

/** `addition` says more where the caller knows more (the Content-Type that promised JSON). */
export function malformedJsonProblem(addition?: string): Problem {
  return problem(400, 'malformed-json', addition ? `${MALFORMED_JSON_DETAIL} ${addition}` : MALFORMED_JSON_DETAIL);
}

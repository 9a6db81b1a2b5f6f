/**
 * The `sql` filter dialect of the CloudEvents Subscriptions API (section 3.2.4.1.2): a CESQL v1
 * expression, which matches an event when it evaluates to `true` without an error.
 *
 * Subscriptions keep the expression's text; it is compiled when the subscription is created or
 * changed (to refuse an invalid one) and, wherever filters are evaluated, once per distinct text:
 * the compiled expressions are kept in a bounded memo keyed by the text, so the router, the
 * dispatcher, pull and replays never parse per event. The memo holds pure functions of the text,
 * no configuration and no adapter, so sharing it across a container's uses is safe.
 */
import { compileCesql, CesqlParseError, type CesqlAttributes, type CompiledCesql } from '../cesql/index.js';

/** Distinct expressions kept compiled; the oldest goes first when more arrive. */
const MEMO_SIZE = 20_000;
const memo = new Map<string, CompiledCesql | undefined>();

/**
 * The compiled expression, or undefined for a text that does not compile (one stored before a
 * bound was tightened): such a filter matches nothing.
 */
export function compiledSqlFilter(text: string): CompiledCesql | undefined {
  if (memo.has(text)) return memo.get(text);
  let compiled: CompiledCesql | undefined;
  try {
    compiled = compileCesql(text);
  } catch (error) {
    if (!(error instanceof CesqlParseError)) throw error;
  }
  remember(text, compiled);
  return compiled;
}

function remember(text: string, compiled: CompiledCesql | undefined): void {
  memo.set(text, compiled);
  if (memo.size > MEMO_SIZE) memo.delete(memo.keys().next().value!);
}

export function sqlFilterMatches(text: string, attributes: CesqlAttributes): boolean {
  return compiledSqlFilter(text)?.matches(attributes) ?? false;
}

/**
 * Why `text` cannot be a subscription's `sql` filter, in words for the 400 problem, or undefined
 * when it can. Refused (the Subscriptions API says SHOULD): a text that does not parse, naming the
 * position and what was expected there; one calling a function CESQL does not define, which could
 * never match.
 */
export function sqlFilterProblem(text: string): string | undefined {
  let compiled: CompiledCesql;
  try {
    compiled = compileCesql(text);
  } catch (error) {
    if (error instanceof CesqlParseError) return error.message;
    throw error;
  }
  const [unknown] = compiled.unknownFunctions;
  if (unknown)
    return `at position ${unknown.at + 1}: no built-in function ${unknown.name} takes ${unknown.arity} argument${unknown.arity === 1 ? '' : 's'}`;
  remember(text, compiled);
  return undefined;
}

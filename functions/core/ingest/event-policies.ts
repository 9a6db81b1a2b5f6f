/**
 * Two checks of the ingest beyond the CloudEvents rules: Koerier's own operational namespace, which
 * no publisher may use, and the data contracts bound to event types (issue 14 item 3).
 */
import type { ParsedEvents } from '../cloudevents/index.js';
import type { DataContractFinding, DataContracts } from '../contracts/data-contracts.js';
import { KoerierError, problems, type ValidationIssue } from '../http/problems.js';
import { isOperationalType, OPERATIONS_TYPE_PREFIX } from '../operations/operational-events.js';

/** The events whose type lies in Koerier's own namespace (core/operations): only Koerier tells what happened to a subscription. */
export function reservedTypeIssues(outcome: ParsedEvents): ValidationIssue[] {
  return outcome.events.flatMap((event, index) =>
    isOperationalType(event.type)
      ? [
          {
            attribute: 'type',
            rule: 'reserved-type',
            requirement: 'EDU-IN',
            message: `Types starting with '${OPERATIONS_TYPE_PREFIX}' are Koerier's own operational events.`,
            ...(outcome.mode === 'batch' ? { index } : {}),
          },
        ]
      : [],
  );
}

/**
 * Throws the 400 when an event's data breaks a contract bound in `enforce` mode (nothing of the
 * request is accepted, as for any invalid event), after `refusing(events, violations)`; returns
 * what `warn` bindings found. Only the bindings that check what `publisher` sends count (issue 28).
 */
export async function checkedAgainstContracts(
  outcome: ParsedEvents,
  publisher: string,
  dataContracts: Pick<DataContracts, 'check'> | undefined,
  refusing: (events: number, violations: number) => void,
): Promise<ValidationIssue[]> {
  if (!dataContracts) return [];
  const { violations, warnings } = await dataContracts.check(outcome.events, outcome.mode === 'batch', publisher);
  if (violations.length > 0) {
    const events = new Set(violations.map((violation) => violation.index ?? 0)).size;
    refusing(events, violations.length);
    throw new KoerierError(
      problems.badRequest(
        'data-contract-violation',
        `The data of ${events === 1 ? 'an event does' : `${events} events do`} not follow the contract bound to its type (EDU-21); no event of the request was accepted.`,
        violations.map(issueOf),
      ),
    );
  }
  return warnings.map(issueOf);
}

function issueOf(finding: DataContractFinding): ValidationIssue {
  return {
    attribute: 'data',
    pointer: finding.pointer,
    rule: finding.rule,
    requirement: 'EDU-21',
    message: `${finding.message} (${finding.contract})`,
    ...(finding.index === undefined ? {} : { index: finding.index }),
  };
}

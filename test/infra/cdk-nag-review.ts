/**
 * cdk-nag's AWS Solutions rules as the infra tests read them (CARD-2): the findings a synthesised
 * app is reported for, the acknowledgements it carries, and which of those are not justified.
 * One place for both test files that review a stack (cdk-nag.test.ts, edge-protection.test.ts).
 */
import { Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';

/** The same rules, blind to acknowledgements: what the stack would be reported for without them. */
class UnacknowledgedChecks extends AwsSolutionsChecks {}
Object.defineProperty(UnacknowledgedChecks.prototype, 'isAcknowledged', { value: () => false });

export interface Acknowledgement {
  /** The construct path the rule is acknowledged on. */
  readonly path: string;
  readonly id: string;
  readonly reason: string;
}

/** An acknowledgement's reason must say specifically why the rule does not apply. */
export const MIN_REASON_LENGTH = 80;

export function acknowledgementsIn(scope: IConstruct): Acknowledgement[] {
  return scope.node.findAll().flatMap((construct) =>
    construct.node.metadata
      .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((entry) =>
        Object.entries(entry.data as Record<string, string>).map(([id, reason]) => ({
          path: construct.node.path,
          id: id.replace(/^annotation::/i, ''),
          reason,
        })),
      ),
  );
}

/** What the rules report in `scope` (already synthesised) despite its acknowledgements: `severity rule: paths`. */
export function unacknowledgedFindings(scope: IConstruct): string[] {
  return new AwsSolutionsChecks(scope)
    .validateScope(scope)
    .violations.map(
      (v) => `${v.severity} ${v.ruleName}: ${v.violatingResources.map((r) => r.constructPath).join(', ')}`,
    );
}

/**
 * The acknowledgements in `scope` (already synthesised) that are not justified: a reason shorter
 * than MIN_REASON_LENGTH, or nothing the rule really finds at (or under) that path to silence.
 */
export function unjustifiedAcknowledgements(scope: IConstruct): string[] {
  const raw = new UnacknowledgedChecks(scope).validateScope(scope).violations;
  return acknowledgementsIn(scope).flatMap((ack) => {
    const silenced = raw
      .filter((v) => v.ruleName === ack.id)
      .flatMap((v) => v.violatingResources)
      .filter((r) => r.constructPath === ack.path || r.constructPath?.startsWith(`${ack.path}/`));
    return [
      ...(ack.reason.length < MIN_REASON_LENGTH
        ? [`${ack.id} at ${ack.path}: a reason of ${ack.reason.length} characters`]
        : []),
      ...(silenced.length === 0 ? [`${ack.id} at ${ack.path} acknowledges nothing`] : []),
    ];
  });
}

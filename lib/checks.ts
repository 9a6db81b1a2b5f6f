/**
 * The compliance checks every synthesis runs: cdk-nag's AWS Solutions rules. A finding that is not
 * acknowledged (with a reason, next to the resource) fails the synth; the acknowledgements are
 * written into the template's Metadata (`cdk_nag.rules_to_suppress`) as the audit trail.
 */
import { Validations, type App } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';

export function addComplianceChecks(app: App): void {
  Validations.of(app).addPlugins(
    new AwsSolutionsChecks(app, { verbose: true, writeSuppressionsToCloudFormation: true }),
  );
}

/**
 * The CDK app: `cdk synth` / `cdk deploy` run this. Settings come from the CDK context (cdk.json or
 * `-c koerier:...=...`); every resource is checked against the cdk-nag AWS Solutions rules. A bad,
 * missing or unknown setting, or a region Koerier does not deploy to (lib/regions.ts), ends the run
 * with one line per problem naming what to fix (docs/DEPLOYING.md), not a stack trace. Settings that
 * are valid but probably not meant (no koerier:alarmEmail) are warnings the CDK CLI prints.
 */
import { App } from 'aws-cdk-lib';
import { addComplianceChecks } from '../lib/checks.js';
import { KoerierStack } from '../lib/koerier-stack.js';
import { readStackConfig, StackConfigError } from '../lib/stack-config.js';
import { TrustConfigError } from '../lib/trust-config.js';

const app = new App();
const account = process.env.CDK_DEFAULT_ACCOUNT;
// Unset only when the app runs outside the CDK CLI: the stack is then environment-agnostic (lib/regions.ts).
const region = process.env.CDK_DEFAULT_REGION;
try {
  const config = readStackConfig(app);
  new KoerierStack(app, config.stackName, {
    config,
    ...(account || region ? { env: { ...(account ? { account } : {}), ...(region ? { region } : {}) } } : {}),
  });
} catch (error) {
  if (!(error instanceof StackConfigError || error instanceof TrustConfigError)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
}
addComplianceChecks(app);
app.synth();

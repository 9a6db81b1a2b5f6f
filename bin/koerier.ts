/**
 * The CDK app: `cdk synth` / `cdk deploy` run this. Settings come from the CDK context (cdk.json or
 * `-c koerier:...=...`); every resource is checked against the cdk-nag AWS Solutions rules. A bad
 * or missing setting ends the run with one line naming the key (docs/DEPLOYING.md), not a stack trace.
 */
import { App } from 'aws-cdk-lib';
import { addComplianceChecks } from '../lib/checks.js';
import { KoerierStack } from '../lib/koerier-stack.js';
import { readStackConfig, StackConfigError, type StackConfig } from '../lib/stack-config.js';

const app = new App();
let config: StackConfig;
try {
  config = readStackConfig(app);
} catch (error) {
  if (!(error instanceof StackConfigError)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
}
const account = process.env.CDK_DEFAULT_ACCOUNT;
const region = process.env.CDK_DEFAULT_REGION;
new KoerierStack(app, config.stackName, {
  config,
  ...(account || region ? { env: { ...(account ? { account } : {}), ...(region ? { region } : {}) } } : {}),
});
addComplianceChecks(app);
app.synth();

/**
 * The CDK app: `cdk synth` / `cdk deploy` run this. Settings come from the CDK context (cdk.json or
 * `-c koerier:...=...`); every resource is checked against the cdk-nag AWS Solutions rules.
 */
import { App } from 'aws-cdk-lib';
import { addComplianceChecks } from '../lib/checks.js';
import { KoerierStack } from '../lib/koerier-stack.js';
import { readStackConfig } from '../lib/stack-config.js';

const app = new App();
const account = process.env.CDK_DEFAULT_ACCOUNT;
const region = process.env.CDK_DEFAULT_REGION;
new KoerierStack(app, 'Koerier', {
  config: readStackConfig(app),
  ...(account || region ? { env: { ...(account ? { account } : {}), ...(region ? { region } : {}) } } : {}),
});
addComplianceChecks(app);
app.synth();

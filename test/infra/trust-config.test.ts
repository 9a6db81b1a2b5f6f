/**
 * Trust on the wire in the stack (issue 12, items 5 and 6): the context keys of lib/trust-config.ts
 * with their one-line messages, and what the stack makes of them — the signing keys each function
 * may use (kms:Sign on the current key only, kms:GetPublicKey on every published one), the mTLS
 * secret granted only to the functions that call out, with the Parameters and Secrets layer — and
 * cdk-nag clean with both options on.
 */
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { parseTrustConfig } from '../../lib/trust-config.js';
import { logicalId, synthKoerier, type Synthesised } from './synth.js';

const NEW_KEY = 'arn:aws:kms:eu-central-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';
const SECRET = 'arn:aws:secretsmanager:eu-central-1:123456789012:secret:koerier/mtls-AbCdEf';

describe('trust context keys (issue 12)', () => {
  it('issue 12 #5, #6: defaults: the stack signs with its own key and presents no client certificate', () => {
    expect(parseTrustConfig({})).toEqual({ signingKeys: ['stack'] });
    expect(parseTrustConfig({ 'koerier:signingKeys': [] })).toEqual({ signingKeys: [] });
    expect(parseTrustConfig({ 'koerier:signingKeys': `${NEW_KEY}, stack` })).toEqual({
      signingKeys: [NEW_KEY, 'stack'],
    });
  });

  it('issue 12 #5, #6: each bad value fails with one line naming the key and an example', () => {
    expect(() => parseTrustConfig({ 'koerier:signingKeys': ['alias/koerier'] })).toThrow(
      /^koerier:signingKeys must list KMS key ARNs and\/or "stack", newest first, e\.g\. \["arn:aws:kms:eu-central-1:123456789012:key\/[^\n]+"stack"\]$/,
    );
    expect(() => parseTrustConfig({ 'koerier:signingKeys': ['stack', 'stack'] })).toThrow(
      /^koerier:signingKeys names a key twice$/,
    );
    expect(() => parseTrustConfig({ 'koerier:clientCertificateSecretArn': 'koerier/mtls' })).toThrow(
      /^koerier:clientCertificateSecretArn must be a Secrets Manager secret ARN, e\.g\. arn:aws:secretsmanager:eu-central-1:123456789012:secret:koerier\/mtls-AbCdEf$/,
    );
  });
});

describe('the stack with a rotation in progress and a client certificate (issue 12)', () => {
  const synth: Synthesised = synthKoerier({
    context: { 'koerier:signingKeys': [NEW_KEY, 'stack'], 'koerier:clientCertificateSecretArn': SECRET },
  });
  const { stack, resources } = synth;
  const stackKey = logicalId(stack, stack.signingKey!);
  const fnOf = (name: string) => resources[logicalId(stack, stack.functions.get(name)!.function)]!;
  const statementsOf = (name: string) => {
    const role = logicalId(stack, stack.functions.get(name)!.role);
    return Object.values(resources)
      .filter((r) => r.Type === 'AWS::IAM::Policy' && JSON.stringify(r.Properties.Roles).includes(role))
      .flatMap((r) => r.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown }[]);
  };
  const resourcesFor = (name: string, action: string) =>
    statementsOf(name)
      .filter((s) => [s.Action].flat().includes(action))
      .flatMap((s) => [s.Resource].flat());

  it('issue 12 #6: the stack key is ECC_NIST_P256 for signing and retained; the signing keys reach every function newest first', () => {
    expect(resources[stackKey]).toMatchObject({
      Type: 'AWS::KMS::Key',
      DeletionPolicy: 'Retain',
      Properties: { KeySpec: 'ECC_NIST_P256', KeyUsage: 'SIGN_VERIFY' },
    });
    for (const name of stack.functions.keys()) {
      expect(fnOf(name).Properties.Environment.Variables[settingEnv.signingKeys], name).toEqual({
        'Fn::Join': ['', [`${NEW_KEY},`, { 'Fn::GetAtt': [stackKey, 'Arn'] }]],
      });
    }
  });

  it('issue 12 #6: only the delivery function signs, and only with the newest key; the JWKS function and the delivery function read every public key', () => {
    expect(resourcesFor('delivery', 'kms:Sign')).toEqual([NEW_KEY]);
    for (const name of ['delivery', 'signingKeys'])
      expect(resourcesFor(name, 'kms:GetPublicKey'), name).toEqual([NEW_KEY, { 'Fn::GetAtt': [stackKey, 'Arn'] }]);
    for (const name of stack.functions.keys()) {
      if (name !== 'delivery') expect(resourcesFor(name, 'kms:Sign'), name).toEqual([]);
      if (name !== 'delivery' && name !== 'signingKeys')
        expect(resourcesFor(name, 'kms:GetPublicKey'), name).toEqual([]);
    }
  });

  it('issue 12 #5: the secret is readable only by the functions that call targets, which get the Parameters and Secrets layer', () => {
    for (const name of stack.functions.keys()) {
      // The ZGW adapter calls an abonnement's callback when it is created (issue 34), as the handshake does.
      const callsOut = name === 'delivery' || name === 'subscriptions' || name === 'zgw';
      expect(resourcesFor(name, 'secretsmanager:GetSecretValue'), name).toEqual(callsOut ? [SECRET] : []);
      const layers = JSON.stringify(fnOf(name).Properties.Layers ?? []);
      expect(/Paramsandsecrets|AWS-Parameters-and-Secrets-Lambda-Extension/i.test(layers), name).toBe(callsOut);
      expect(fnOf(name).Properties.Environment.Variables[settingEnv.clientCertificate], name).toBe(SECRET);
    }
  });

  it('issue 12 #5, #6: cdk-nag reports nothing with both options on', () => {
    const report = new AwsSolutionsChecks(synth.app).validateScope(synth.app);
    expect(
      report.violations.map((v) => `${v.ruleName}: ${v.violatingResources.map((r) => r.constructPath).join(', ')}`),
    ).toEqual([]);
  });
});

describe('the stack with signing off (issue 12)', () => {
  it('issue 12 #6: koerier:signingKeys [] creates no signing key, grants no KMS signing and sets no signing setting', () => {
    const { stack, resources } = synthKoerier({ context: { 'koerier:signingKeys': [] } });
    expect(stack.signingKey).toBeUndefined();
    expect(
      Object.values(resources).filter((r) => r.Type === 'AWS::KMS::Key' && r.Properties.KeyUsage === 'SIGN_VERIFY'),
    ).toEqual([]);
    expect(JSON.stringify(resources)).not.toMatch(/kms:Sign"|kms:GetPublicKey|KOERIER_SIGNING_KEYS/);
  });
});

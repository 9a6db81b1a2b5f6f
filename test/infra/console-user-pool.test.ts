/**
 * Issue 16: with `koerier:consoleUserPool` and no organisation provider for the console, the stack
 * creates a Cognito user pool (no self sign-up, MFA, a strong password policy, threat protection),
 * its hosted sign-in domain, the console as its one public PKCE client, and the admin group; the
 * console's config.json names the pool, and every function is told the pool and the client, so
 * the API takes that client's user tokens.
 */
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { parseStackConfig, StackConfigError } from '../../lib/stack-config.js';
import type { KoerierStack } from '../../lib/koerier-stack.js';
import { unacknowledgedFindings, unjustifiedAcknowledgements } from './cdk-nag-review.js';
import { ACCEPT_CLOUDFRONT_DEFAULT_CERTIFICATE as ACCEPT, newApp, synthContext, synthKoerier } from './synth.js';

interface Resource {
  readonly Properties: Record<string, unknown>;
}

describe('console user pool (koerier:consoleUserPool)', () => {
  let app: ReturnType<typeof newApp>;
  let template: Template;
  let stack: KoerierStack;
  beforeAll(() => {
    app = newApp({ 'koerier:consoleUserPool': 'gemeente-voorbeeld-koerier', ...ACCEPT });
    ({ template, stack } = synthKoerier({ app }));
  });

  const only = (type: string): Resource => {
    const found = Object.values(template.findResources(type)) as Resource[];
    expect(found, type).toHaveLength(1);
    return found[0]!;
  };

  it('issue 16: the pool admits only invited users, requires MFA and a strong password, and is kept when the stack goes', () => {
    const pool = only('AWS::Cognito::UserPool');
    expect(pool.Properties).toMatchObject({
      AdminCreateUserConfig: { AllowAdminCreateUserOnly: true },
      MfaConfiguration: 'ON',
      EnabledMfas: ['SOFTWARE_TOKEN_MFA'],
      Policies: {
        PasswordPolicy: {
          MinimumLength: 14,
          RequireLowercase: true,
          RequireUppercase: true,
          RequireNumbers: true,
          RequireSymbols: true,
        },
      },
      UserPoolTier: 'PLUS',
      UserPoolAddOns: { AdvancedSecurityMode: 'ENFORCED' },
      DeletionProtection: 'ACTIVE',
    });
    const [logicalId] = Object.keys(template.findResources('AWS::Cognito::UserPool'));
    template.hasResource('AWS::Cognito::UserPool', { DeletionPolicy: 'Retain' });
    expect(logicalId).toBeDefined();
    expect(only('AWS::Cognito::UserPoolDomain').Properties['Domain']).toBe('gemeente-voorbeeld-koerier');
  });

  it('issue 16: the console is the one public client: code grant with PKCE, no secret, no password flows, redirected to the console only', () => {
    const client = only('AWS::Cognito::UserPoolClient').Properties;
    expect(client['GenerateSecret']).toBe(false);
    expect(client['AllowedOAuthFlows']).toEqual(['code']);
    expect(client['AllowedOAuthFlowsUserPoolClient']).toBe(true);
    expect(client['AllowedOAuthScopes']).toEqual(['openid', 'email']);
    expect(client['SupportedIdentityProviders']).toEqual(['COGNITO']);
    expect(client['ExplicitAuthFlows'] ?? []).not.toEqual(expect.arrayContaining(['ALLOW_USER_PASSWORD_AUTH']));
    expect(client['PreventUserExistenceErrors']).toBe('ENABLED');
    const callbacks = JSON.stringify(client['CallbackURLs']);
    expect(callbacks).toContain('/console/');
    expect(callbacks).toMatch(/DomainName/);
    expect(callbacks).not.toContain('*');
  });

  it('EDU-2: the console’s app client can be given no Koerier scope: no resource server, the OpenID scopes only, the code grant only; its admins read', () => {
    // What a user may do comes from the groups (functions/core/auth/console-user-pool.ts), read scopes
    // only; the pool itself offers the public client nothing a confidential client would hold.
    expect(Object.keys(template.findResources('AWS::Cognito::UserPoolResourceServer'))).toEqual([]);
    const client = only('AWS::Cognito::UserPoolClient').Properties;
    expect(client['AllowedOAuthScopes']).toEqual(['openid', 'email']);
    expect(client['AllowedOAuthFlows']).toEqual(['code']);
    expect(client['GenerateSecret']).toBe(false);
    expect(stack.console!.config['scope']).toBe('openid email');
    expect(only('AWS::Cognito::UserPoolGroup').Properties['Description']).toMatch(
      /^Operators: read every partner’s|^Operators: read every partner's/,
    );
  });

  it('issue 16: the stack creates the admin group; partner groups are the operator’s, named partner:<client id>', () => {
    expect(only('AWS::Cognito::UserPoolGroup').Properties).toMatchObject({
      GroupName: 'admin',
      Description: expect.stringContaining('partner:<client id>'),
    });
  });

  it('issue 16: config.json names the pool as issuer and its console client, with the OpenID scopes, never a secret', () => {
    const resolve = (value: string | undefined) => JSON.stringify(stack.resolve(value));
    const config = stack.console!.config;
    expect(Object.keys(config).sort()).toEqual(['apiUrl', 'clientId', 'issuer', 'scope']);
    expect(config['scope']).toBe('openid email');
    expect(resolve(config['issuer'])).toContain('ProviderURL');
    expect(resolve(config['clientId'])).toContain(
      stack.getLogicalId(stack.consoleUserPool!.client.node.defaultChild as never),
    );
  });

  it('issue 16: every API function is told the pool and the console client, so the API takes their tokens', () => {
    const functions = Object.values(template.findResources('AWS::Lambda::Function')) as Resource[];
    const koerierFunctions = functions.filter((fn) =>
      JSON.stringify(fn.Properties['Environment'] ?? {}).includes(settingEnv.issuer),
    );
    expect(koerierFunctions.length).toBeGreaterThan(5);
    const clientId = stack.getLogicalId(stack.consoleUserPool!.client.node.defaultChild as never);
    for (const fn of koerierFunctions) {
      const variables = (fn.Properties['Environment'] as { Variables: Record<string, unknown> }).Variables;
      expect(JSON.stringify(variables[settingEnv.consoleUserPoolIssuer])).toContain('ProviderURL');
      expect(variables[settingEnv.consoleUserPoolClientId]).toEqual({ Ref: clientId });
    }
    template.hasOutput('ConsoleUserPoolId', {});
    template.hasOutput('ConsoleSignInDomain', {});
  });

  it('CARD-2, issue 16: cdk-nag reports nothing unacknowledged about the pool, and no acknowledgement is idle', () => {
    expect(unacknowledgedFindings(app)).toEqual([]);
    expect(unjustifiedAcknowledgements(app)).toEqual([]);
  });

  it('issue 16: without the setting there is no pool and no pool setting; with the organisation console client neither', () => {
    for (const context of [{}, { 'koerier:consoleClientId': 'koerier-console', ...ACCEPT }]) {
      const plain = synthKoerier({ app: newApp(context) }).template;
      expect(Object.keys(plain.findResources('AWS::Cognito::UserPool'))).toHaveLength(0);
      expect(JSON.stringify(plain.toJSON())).not.toContain(settingEnv.consoleUserPoolIssuer);
    }
  });

  it('issue 16: the prefix follows Cognito’s rules, and the pool never goes with an organisation console client', () => {
    const valid = { ...synthContext, ...ACCEPT };
    const rejects = (extra: Record<string, unknown>, message: RegExp) =>
      expect(() => parseStackConfig({ ...valid, ...extra })).toThrow(message);
    expect(parseStackConfig({ ...valid, 'koerier:consoleUserPool': 'school-koerier' }).consoleUserPool).toBe(
      'school-koerier',
    );
    for (const prefix of [
      '',
      'Upper',
      '-lead',
      'trail-',
      'my-aws-pool',
      'cognito-x',
      'x'.repeat(64),
      'dots.here',
      true,
    ]) {
      rejects({ 'koerier:consoleUserPool': prefix }, /koerier:consoleUserPool must be the sign-in domain prefix/);
    }
    rejects(
      { 'koerier:consoleUserPool': 'school-koerier', 'koerier:consoleClientId': 'koerier-console' },
      /cannot go with koerier:consoleClientId/,
    );
    expect(() => parseStackConfig({ ...valid, 'koerier:consoleUserPool': 'Bad' })).toThrow(StackConfigError);
  });
});

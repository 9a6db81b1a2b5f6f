/**
 * The console's sign-in where the organisation brings no OpenID Connect provider for its people
 * (`koerier:consoleUserPool`, issue 16): a Cognito user pool the stack owns. Operators invite the
 * users (no self sign-up), every user has a second factor, and the console is the pool's only app
 * client: public, authorization code with PKCE, no secret. Groups say who a user acts for:
 * `partner:<client id>` (the operator creates one per partner) and `admin`, which the stack
 * creates; the API reads them in functions/core/auth/console-user-pool.ts.
 */
import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as cognito from 'aws-cdk-lib/aws-cognito';
import { Construct } from 'constructs';
import { ADMIN_GROUP, PARTNER_GROUP_PREFIX } from '../../functions/core/auth/console-user-pool.js';

export interface ConsoleUserPoolProps {
  /** `https://<prefix>.auth.<region>.amazoncognito.com`: unique in the region. */
  readonly domainPrefix: string;
  /** Where the console lives: its redirect and sign-out URLs. */
  readonly consoleUrls: readonly string[];
}

/** Scopes the console asks the pool for: who the user is. What they may do comes from their groups, not from scopes. */
export const USER_POOL_CONSOLE_SCOPES = ['openid', 'email'];

export class ConsoleUserPool extends Construct {
  readonly userPool: cognito.UserPool;
  readonly client: cognito.UserPoolClient;
  readonly domain: cognito.UserPoolDomain;

  constructor(scope: Construct, id: string, props: ConsoleUserPoolProps) {
    super(scope, id);
    this.userPool = new cognito.UserPool(this, 'Users', {
      userPoolName: `${Stack.of(this).stackName}-console`,
      selfSignUpEnabled: false,
      signInAliases: { email: true },
      signInCaseSensitive: false,
      standardAttributes: { email: { required: true, mutable: true } },
      mfa: cognito.Mfa.REQUIRED,
      mfaSecondFactor: { otp: true, sms: false },
      passwordPolicy: {
        minLength: 14,
        requireLowercase: true,
        requireUppercase: true,
        requireDigits: true,
        requireSymbols: true,
        tempPasswordValidity: Duration.days(3),
      },
      accountRecovery: cognito.AccountRecovery.EMAIL_ONLY,
      // Threat protection (compromised credentials, risky sign-ins) needs the Plus plan: about $0.02
      // per monthly active user, a few dollars for the handful of people who run a gateway.
      featurePlan: cognito.FeaturePlan.PLUS,
      standardThreatProtectionMode: cognito.StandardThreatProtectionMode.FULL_FUNCTION,
      deletionProtection: true,
      // The users and their second factors are the organisation's data: a stack deletion keeps them.
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.domain = this.userPool.addDomain('SignIn', { cognitoDomain: { domainPrefix: props.domainPrefix } });
    this.client = this.userPool.addClient('Console', {
      userPoolClientName: 'koerier-console',
      generateSecret: false,
      // Only the hosted sign-in with the code grant: no password ever passes through the console.
      authFlows: {},
      oAuth: {
        flows: { authorizationCodeGrant: true },
        scopes: USER_POOL_CONSOLE_SCOPES.map((name) => cognito.OAuthScope.custom(name)),
        callbackUrls: [...props.consoleUrls],
        logoutUrls: [...props.consoleUrls],
      },
      supportedIdentityProviders: [cognito.UserPoolClientIdentityProvider.COGNITO],
      preventUserExistenceErrors: true,
      enableTokenRevocation: true,
      accessTokenValidity: Duration.hours(1),
      idTokenValidity: Duration.hours(1),
      refreshTokenValidity: Duration.hours(12),
    });
    new cognito.CfnUserPoolGroup(this, 'Admins', {
      userPoolId: this.userPool.userPoolId,
      groupName: ADMIN_GROUP,
      // Reading only: the console is a public client, which the Edukoppeling profile keeps out of the exchange (EDU-2).
      description: `Operators: read every partner's subscriptions, dead letters and replays; with one "${PARTNER_GROUP_PREFIX}<client id>" group as well`,
    });
  }

  /** The `iss` of the pool's tokens, and where its OpenID Connect discovery document is. */
  get issuer(): string {
    return this.userPool.userPoolProviderUrl;
  }
}

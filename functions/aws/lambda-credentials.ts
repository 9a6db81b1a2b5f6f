/**
 * The credentials of a deployed function: its execution role's, which Lambda puts in the
 * environment (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`) for as long as
 * the execution environment lives.
 *
 * The bundler puts this module in the place of `@aws-sdk/credential-provider-node`
 * (lib/bundling.ts, `alias`): the SDK's default chain also carries the SSO, ini-file, process,
 * web-identity, container and instance-metadata providers, which a Lambda function never reaches
 * and which cost every function about 110 KB of bundle and its load time on each cold start.
 * Only the bundles see this; the laptop host and the tests run the SDK's own chain.
 */
import { fromEnv } from '@aws-sdk/credential-provider-env';

/** The one export of `@aws-sdk/credential-provider-node` the SDK clients use (their `runtimeConfig`). */
export const defaultProvider: typeof fromEnv = (init) => fromEnv(init);

/**
 * Issue 31 item 2: settings that refuse mistakes. A misspelt key, a URL where a host name belongs
 * and JSON that does not parse stop the synth, one problem a line, without follow-on errors about
 * what depends on the failed setting; what is valid but probably not meant is a warning.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { App } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../lib/koerier-stack.js';
import { jsonSyntaxProblem } from '../../lib/json-setting.js';
import { parseStackConfig, readStackConfig, stackConfigWarnings, StackConfigError } from '../../lib/stack-config.js';
import { cdkJsonContext, synthKoerier } from './synth.js';

const required = {
  'koerier:issuer': 'https://login.example.org/realms/koerier',
  'koerier:audience': 'koerier',
  'koerier:jwksUrl': 'https://login.example.org/realms/koerier/protocol/openid-connect/certs',
  'koerier:allowedOrigins': 'events.partner.example.org',
  'koerier:webhookOrigin': 'koerier.example.org',
  'koerier:publishers': '{"partner-lvs":["urn:nld:oin:00000001823288444000:"]}',
};

/** The problem lines of a refused context (the heading, when there are several, left out). */
function problemsOf(context: Record<string, unknown>): string[] {
  try {
    parseStackConfig({ ...cdkJsonContext, ...required, ...context });
  } catch (error) {
    expect(error).toBeInstanceOf(StackConfigError);
    const lines = (error as Error).message.split('\n');
    if (lines.length === 1) return [lines[0]!.replace(/^Koerier's CDK context is invalid: /, '')];
    expect(lines[0]).toBe(`Koerier's CDK context is invalid (${lines.length - 1} problems):`);
    return lines.slice(1).map((line) => line.replace(/^ {2}/, ''));
  }
  throw new Error('expected a StackConfigError');
}

describe('CARD-2, issue 31 item 2: settings that refuse mistakes', () => {
  it('issue 31 item 2: an unknown koerier: key given as context is refused, naming the nearest known key', () => {
    // Through readStackConfig and an App, as `cdk synth -c` gives it: the key is found among all the context.
    const app = new App({ context: { ...cdkJsonContext, ...required, 'koerier:alarmEmial': 'ops@example.org' } });
    expect(() => readStackConfig(app)).toThrow(
      new StackConfigError(
        'Koerier\'s CDK context is invalid: koerier:alarmEmial is not a Koerier setting: did you mean koerier:alarmEmail? (every setting: docs/DEPLOYING.md, "Settings")',
      ),
    );
    expect(problemsOf({ 'koerier:webhookOrigins': 'a.example.org' })).toEqual([
      'koerier:webhookOrigins is not a Koerier setting: did you mean koerier:webhookOrigin? (every setting: docs/DEPLOYING.md, "Settings")',
    ]);
    expect(problemsOf({ 'koerier:colour': 'blue' })).toEqual([
      'koerier:colour is not a Koerier setting (every setting: docs/DEPLOYING.md, "Settings")',
    ]);
    // Other tools' context (CDK's own flags) is not Koerier's to judge.
    expect(() => parseStackConfig({ ...required, '@aws-cdk/core:someFlag': true })).not.toThrow();
  });

  it('issue 31 item 2: a URL where a host name belongs is refused, saying which host name to give', () => {
    expect(problemsOf({ 'koerier:webhookOrigin': 'https://koerier.example.org/' })).toEqual([
      'koerier:webhookOrigin must be a host name, not a URL: give koerier.example.org, got "https://koerier.example.org/"',
    ]);
    expect(
      problemsOf({
        'koerier:allowedOrigins': 'https://events.partner.example.org/,other.example.org,http://x.example.org:8443',
      }),
    ).toEqual([
      'koerier:allowedOrigins must list host names, not URLs: give events.partner.example.org, got "https://events.partner.example.org/"',
      'koerier:allowedOrigins must list host names, not URLs: give x.example.org:8443, got "http://x.example.org:8443"',
    ]);
    expect(problemsOf({ 'koerier:webhookOrigin': 'koerier_example' })).toEqual([
      'koerier:webhookOrigin must be a host name such as koerier.example.org (letters, digits, hyphens and dots), got "koerier_example"',
    ]);
    // Host names, "*" and a port pass.
    const config = parseStackConfig({
      ...required,
      'koerier:allowedOrigins': ['*', 'a.example.org:8443', 'localhost'],
    });
    expect(config.allowedOrigins).toEqual(['*', 'a.example.org:8443', 'localhost']);
  });

  it('issue 31 item 2: JSON that does not parse is named invalid JSON with where it goes wrong, never "is required"', () => {
    // What the shell leaves of -c koerier:publishers={"partner-lvs":[...]} without single quotes.
    expect(problemsOf({ 'koerier:publishers': '{partner-lvs:[urn:nld:oin:00000001823288444000:]}' })).toEqual([
      `koerier:publishers is not valid JSON: a property name in double quotes expected at line 1, column 2 (character 2), found "p" (did the shell remove the double quotes? put the whole value in single quotes); e.g. -c koerier:publishers='{"partner-lvs":["urn:nld:oin:00000001823288444000:"]}'`,
    ]);
    expect(problemsOf({ 'koerier:batchSizes': '{"router": 100,}' })).toEqual([
      `koerier:batchSizes is not valid JSON: a property name in double quotes expected at line 1, column 16 (character 16), found "}"; e.g. -c koerier:batchSizes='{"router": 100}'`,
    ]);
    const [routeThrottling] = problemsOf({ 'koerier:routeThrottling': '{"ingest": {"rateLimit": 300' });
    expect(routeThrottling).toMatch(
      /^koerier:routeThrottling is not valid JSON: ',' or '}' after a property value expected at line 1, column 29 \(character 29\), found the end of the text; /,
    );
    expect(jsonSyntaxProblem('[1,\n 2 3]')).toBe(
      "',' or ']' after an element expected at line 2, column 4 (character 8), found \"3\"",
    );
  });

  it('issue 31 item 2: one problem a line, and none that only follows from another', () => {
    // Four independent mistakes: four lines, in the order of the settings.
    expect(
      problemsOf({
        'koerier:alarmEmial': 'ops@example.org',
        'koerier:webhookOrigin': 'https://koerier.example.org/',
        'koerier:entitlements': '{oops}',
        'koerier:signingKeys': 'alias/koerier',
      }).map((line) => line.split(' ')[0]),
    ).toEqual(['koerier:alarmEmial', 'koerier:webhookOrigin', 'koerier:entitlements', 'koerier:signingKeys']);
    // A wrong preset, or an issuer the preset cannot derive from, is the only problem: the JWKS URL
    // it would have derived is not also reported missing.
    const withoutJwks = { 'koerier:jwksUrl': undefined };
    expect(problemsOf({ ...withoutJwks, 'koerier:identityProvider': 'keycloack' })).toEqual([
      'koerier:identityProvider must be "keycloak", "entra-id", "edukoppeling" or left out, got "keycloack"',
    ]);
    expect(
      problemsOf({ ...withoutJwks, 'koerier:identityProvider': 'keycloak', 'koerier:issuer': 'http://idp' }),
    ).toEqual([
      'koerier:issuer must be an https URL, e.g. -c koerier:issuer=https://login.example.org/realms/koerier, got "http://idp"',
    ]);
    // A wrong edge mode: its names are not also "applies only with cloudfront-waf".
    expect(
      problemsOf({
        'koerier:edgeProtection': 'cloudfront',
        'koerier:edgeDomain': 'koerier.gemeente.example',
        'koerier:edgeCertificateArn':
          'arn:aws:acm:us-east-1:123456789012:certificate/0a1b2c3d-1111-2222-3333-444455556666',
      }),
    ).toEqual(['koerier:edgeProtection must be "none" or "cloudfront-waf", got "cloudfront"']);
  });

  it('issue 31 item 2: no alarmEmail, and bearer tokens in production, are warnings on the stack, not errors', () => {
    const warned = (context: Record<string, unknown>) =>
      stackConfigWarnings(parseStackConfig({ ...required, ...context })).map((warning) => warning.id);
    expect(warned({})).toEqual(['Koerier::NoAlarmEmail']);
    expect(warned({ 'koerier:alarmEmail': 'ops@example.org' })).toEqual([]);
    expect(
      warned({
        'koerier:alarmEmail': 'ops@example.org',
        'koerier:stage': 'prod',
        'koerier:sinkCredentials': 'bearer-or-oauth2',
      }),
    ).toEqual(['Koerier::BearerSinkCredentialsInProduction']);
    expect(
      warned({
        'koerier:alarmEmail': 'ops@example.org',
        'koerier:stage': 'test',
        'koerier:sinkCredentials': 'bearer-or-oauth2',
      }),
    ).toEqual([]);
    expect(
      warned({
        'koerier:alarmEmail': 'ops@example.org',
        'koerier:stage': 'prod',
        'koerier:sinkCredentials': 'oauth2-only',
      }),
    ).toEqual([]);

    // The one synth of this file: both warnings reach the CDK CLI as the stack's annotations.
    const { stack } = synthKoerier({
      context: { 'koerier:stage': 'prod', 'koerier:sinkCredentials': 'bearer-or-oauth2' },
    });
    const annotations = Annotations.fromStack(stack);
    annotations.hasWarning(
      `/${stack.stackName}`,
      Match.stringLikeRegexp('^koerier:alarmEmail is not set: .*no alarm reaches anyone'),
    );
    annotations.hasWarning(
      `/${stack.stackName}`,
      Match.stringLikeRegexp('^koerier:sinkCredentials "bearer-or-oauth2" in stage "prod": .*static bearer tokens'),
    );
    expect(annotations.findError('*', Match.anyValue())).toEqual([]);
  }, 240_000);

  it('issue 31 item 2: bin/koerier.ts, run as cdk runs it, exits 1 with one line per mistake of the issue', () => {
    const out = mkdtempSync(path.join(tmpdir(), 'koerier-mistakes-'));
    try {
      const run = spawnSync(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'bin/koerier.ts')], {
        cwd: REPO_ROOT,
        env: {
          ...process.env,
          CDK_CONTEXT_JSON: JSON.stringify({
            ...cdkJsonContext,
            ...required,
            'koerier:webhookOrigin': 'https://koerier.example.org/',
            'koerier:allowedOrigins': 'https://events.partner.example.org/',
            'koerier:alarmEmial': 'ops@example.org',
            'koerier:publishers': '{partner-lvs:[urn:nld:oin:00000001823288444000:]}',
          }),
          CDK_OUTDIR: out,
        },
        encoding: 'utf8',
        timeout: 200_000,
      });
      expect(run.status).toBe(1);
      const lines = run.stderr.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('npm warn'));
      expect(
        lines.map((line) => /^(?:Koerier's CDK context is invalid \(\d+ problems\):|\s{2}koerier:\w+)/.exec(line)?.[0]),
      ).toEqual([
        "Koerier's CDK context is invalid (4 problems):",
        '  koerier:alarmEmial',
        '  koerier:webhookOrigin',
        '  koerier:allowedOrigins',
        '  koerier:publishers',
      ]);
      expect(run.stderr).not.toMatch(/\n\s+at /);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 240_000);
});

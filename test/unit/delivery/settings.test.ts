import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, settingEnv } from '../../../functions/config.js';
import { parseStackConfig, settingEnvironment, StackConfigError } from '../../../lib/stack-config.js';

const base = {
  [settingEnv.issuer]: 'https://issuer.test',
  [settingEnv.audience]: 'koerier',
  [settingEnv.jwksUrl]: 'https://issuer.test/jwks',
};

describe('delivery settings', () => {
  it('EDU-18: the default schedule retries for 24 hours from 30 s up to 4-hour gaps; suspension after 5 days', () => {
    const { delivery } = loadConfig(base);
    expect(delivery.retry).toEqual({ initialDelaySeconds: 30, maxDelaySeconds: 4 * 3600, windowSeconds: 24 * 3600 });
    expect(delivery.suspendAfterSeconds).toBe(5 * 24 * 3600);
    expect(delivery.breaker).toEqual({ failureThreshold: 5, cooldownSeconds: 60 });
    expect(delivery).toMatchObject({ connectTimeoutMs: 5000, responseTimeoutMs: 10_000, maxResponseBytes: 65_536 });
  });

  it('a shortened schedule for tests comes from the environment, and nonsense is refused', () => {
    const { delivery } = loadConfig({
      ...base,
      [settingEnv.deliveryRetryInitialSeconds]: '1',
      [settingEnv.deliveryRetryWindowSeconds]: '6',
    });
    expect(delivery.retry).toMatchObject({ initialDelaySeconds: 1, windowSeconds: 6 });
    expect(() => loadConfig({ ...base, [settingEnv.deliveryRetryInitialSeconds]: '0' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, [settingEnv.deliveryResponseTimeoutMs]: 'soon' })).toThrow(ConfigError);
  });

  it('metric records are written in Lambda only', () => {
    expect(loadConfig(base).delivery.emitMetrics).toBe(false);
    expect(loadConfig({ ...base, AWS_LAMBDA_FUNCTION_NAME: 'koerier-delivery' }).delivery.emitMetrics).toBe(true);
  });
});

describe('who may do what towards targets (issue 8)', () => {
  const context = {
    'koerier:issuer': 'https://login.example.org/realms/koerier',
    'koerier:audience': 'koerier',
    'koerier:jwksUrl': 'https://login.example.org/realms/koerier/certs',
    'koerier:allowedOrigins': ['partner.example.org'],
    'koerier:webhookOrigin': 'koerier.example.org',
    'koerier:publishers': { 'partner-lvs': ['urn:nld:oin:00000001823288444000:'] },
  };

  it('EDU-4: only OAuth2 client credentials towards targets by default; bearer-or-oauth2 is the documented switch; nonsense is refused', () => {
    expect(loadConfig(base).sinkCredentials).toBe('oauth2-only');
    expect(loadConfig({ ...base, [settingEnv.sinkCredentials]: 'bearer-or-oauth2' }).sinkCredentials).toBe(
      'bearer-or-oauth2',
    );
    expect(() => loadConfig({ ...base, [settingEnv.sinkCredentials]: 'none' })).toThrow(
      /KOERIER_SINK_CREDENTIALS must be oauth2-only or bearer-or-oauth2/,
    );
    expect(parseStackConfig(context).sinkCredentials).toBe('oauth2-only');
    const nlgov = parseStackConfig({ ...context, 'koerier:sinkCredentials': 'bearer-or-oauth2' });
    expect(loadConfig({ ...base, ...settingEnvironment(nlgov, 'https://api.example.org') }).sinkCredentials).toBe(
      'bearer-or-oauth2',
    );
    expect(() => parseStackConfig({ ...context, 'koerier:sinkCredentials': 'bearer' })).toThrow(StackConfigError);
  });

  it('review #19: sinks and token URLs may name port 443 by default; the list is configurable and validated', () => {
    expect(loadConfig(base).outboundPorts).toEqual([443]);
    expect(loadConfig({ ...base, [settingEnv.outboundPorts]: '443, 8443' }).outboundPorts).toEqual([443, 8443]);
    for (const bad of ['0', '65536', '443,x', '1e3', '-1', ',']) {
      expect(() => loadConfig({ ...base, [settingEnv.outboundPorts]: bad })).toThrow(/KOERIER_OUTBOUND_PORTS/);
    }
    const ports = parseStackConfig({ ...context, 'koerier:outboundPorts': [443, 8443] });
    expect(ports.outboundPorts).toEqual([443, 8443]);
    expect(loadConfig({ ...base, ...settingEnvironment(ports, 'https://api.example.org') }).outboundPorts).toEqual([
      443, 8443,
    ]);
    expect(parseStackConfig({ ...context, 'koerier:outboundPorts': '443,9443' }).outboundPorts).toEqual([443, 9443]);
    expect(() => parseStackConfig({ ...context, 'koerier:outboundPorts': [443, 70000] })).toThrow(
      /koerier:outboundPorts/,
    );
    expect(() => parseStackConfig({ ...context, 'koerier:outboundPorts': [] })).toThrow(/koerier:outboundPorts/);
  });
});

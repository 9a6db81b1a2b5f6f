/** Review #20: the edge-protection settings in the CDK context are validated, each problem naming its key. */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../functions/config.js';
import {
  DEFAULT_EDGE_RATE_LIMITS,
  DEFAULT_INGEST_RESERVED_CONCURRENCY,
  DEFAULT_PULL_RESERVED_CONCURRENCY,
  parseProtectionConfig,
} from '../../lib/protection-config.js';
import { functions } from '../../functions/config/resources.js';
import { parseStackConfig, settingEnvironment } from '../../lib/stack-config.js';

/** The functions the message must list: every one with routes, in the order functions/config/resources.ts declares them; the router has none. */
const functionsWithRoutes = Object.entries(functions)
  .filter(([, spec]) => 'routes' in spec)
  .map(([name]) => name);

const valid = {
  'koerier:issuer': 'https://login.example.org/realms/koerier',
  'koerier:audience': 'koerier',
  'koerier:jwksUrl': 'https://login.example.org/realms/koerier/certs',
  'koerier:allowedOrigins': ['partner.example.org'],
  'koerier:webhookOrigin': 'koerier.example.org',
  'koerier:publishers': { 'partner-lvs': ['urn:nld:oin:00000001823288444000:'] },
};
const ACL = 'arn:aws:wafv2:us-east-1:123456789012:global/webacl/org-edge/0a1b2c3d-1111-2222-3333-444455556666';

function issuesOf(context: Record<string, unknown>): string[] {
  const issues: string[] = [];
  parseProtectionConfig(context, issues);
  return issues;
}

describe('review #20: protection settings (lib/protection-config.ts)', () => {
  it('review #20: reserved concurrency is a whole number from 1, or "none"; 0 (which would stop the ingest) is refused', () => {
    expect(parseProtectionConfig({}, []).ingestReservedConcurrency).toBe(DEFAULT_INGEST_RESERVED_CONCURRENCY);
    expect(parseProtectionConfig({ 'koerier:ingestReservedConcurrency': '12' }, []).ingestReservedConcurrency).toBe(12);
    expect(parseProtectionConfig({ 'koerier:ingestReservedConcurrency': 'none' }, []).ingestReservedConcurrency).toBe(
      'none',
    );
    expect(parseProtectionConfig({}, []).pullReservedConcurrency).toBe(DEFAULT_PULL_RESERVED_CONCURRENCY);
    expect(parseProtectionConfig({ 'koerier:pullReservedConcurrency': '4' }, []).pullReservedConcurrency).toBe(4);
    expect(parseProtectionConfig({ 'koerier:pullReservedConcurrency': 'none' }, []).pullReservedConcurrency).toBe(
      'none',
    );
    expect(issuesOf({ 'koerier:pullReservedConcurrency': 0 })).toEqual([
      expect.stringMatching(/^koerier:pullReservedConcurrency \(or "none"\) must be a whole number from 1 to 10000/),
    ]);
    for (const bad of [0, -1, 2.5, 'lots', 10_001]) {
      expect(issuesOf({ 'koerier:ingestReservedConcurrency': bad }), String(bad)).toEqual([
        expect.stringMatching(
          /^koerier:ingestReservedConcurrency \(or "none"\) must be a whole number from 1 to 10000/,
        ),
      ]);
    }
  });

  it('review #20: route throttling names functions with routes, each with a whole rate and burst; unnamed functions keep their defaults', () => {
    const config = parseProtectionConfig(
      { 'koerier:routeThrottling': '{"subscriptions": {"rateLimit": 5, "burstLimit": 10}}' },
      [],
    );
    expect(config.routeThrottling['subscriptions']).toEqual({ rateLimit: 5, burstLimit: 10 });
    expect(config.routeThrottling['ingest']).toEqual({ rateLimit: 300, burstLimit: 600 });
    expect(issuesOf({ 'koerier:routeThrottling': { router: { rateLimit: 5, burstLimit: 10 } } })).toEqual([
      expect.stringMatching(
        new RegExp(
          `^koerier:routeThrottling.router names no function with routes \\(known: ${functionsWithRoutes.join(', ')}\\)`,
        ),
      ),
    ]);
    expect(issuesOf({ 'koerier:routeThrottling': { ingest: { rateLimit: 0, burstLimit: 10 } } })).toEqual([
      expect.stringMatching(/^koerier:routeThrottling.ingest.rateLimit must be a whole number from 1/),
    ]);
    expect(issuesOf({ 'koerier:routeThrottling': { ingest: { rateLimit: 5 } } })).toEqual([
      expect.stringMatching(/^koerier:routeThrottling.ingest.burstLimit must be/),
    ]);
    expect(issuesOf({ 'koerier:routeThrottling': '[1]' })).toEqual([
      expect.stringMatching(/^koerier:routeThrottling must be an object/),
    ]);
  });

  it('review #20: edge protection is "none" or "cloudfront-waf"; its ACL ARN must be a CLOUDFRONT web ACL; its settings need it on', () => {
    expect(parseProtectionConfig({}, []).edge).toEqual({ mode: 'none' });
    expect(parseProtectionConfig({ 'koerier:edgeProtection': 'cloudfront-waf' }, []).edge).toEqual({
      mode: 'cloudfront-waf',
      rateLimitPerIp: DEFAULT_EDGE_RATE_LIMITS.perIp,
      rateLimitPerAuthorization: DEFAULT_EDGE_RATE_LIMITS.perAuthorization,
    });
    expect(
      parseProtectionConfig(
        {
          'koerier:edgeProtection': 'cloudfront-waf',
          'koerier:edgeWebAclArn': ACL,
          'koerier:edgeRateLimits': { perIp: 100 },
        },
        [],
      ).edge,
    ).toEqual({
      mode: 'cloudfront-waf',
      webAclArn: ACL,
      rateLimitPerIp: 100,
      rateLimitPerAuthorization: DEFAULT_EDGE_RATE_LIMITS.perAuthorization,
    });
    expect(issuesOf({ 'koerier:edgeProtection': 'waf' })).toEqual([
      expect.stringMatching(/^koerier:edgeProtection must be "none" or "cloudfront-waf"/),
    ]);
    // A regional (REGIONAL scope) web ACL cannot be attached to CloudFront.
    expect(
      issuesOf({
        'koerier:edgeProtection': 'cloudfront-waf',
        'koerier:edgeWebAclArn': ACL.replace('us-east-1', 'eu-west-1').replace('global', 'regional'),
      }),
    ).toEqual([expect.stringMatching(/^koerier:edgeWebAclArn must be the ARN of a CLOUDFRONT-scope WAFv2 web ACL/)]);
    expect(
      issuesOf({ 'koerier:edgeProtection': 'cloudfront-waf', 'koerier:edgeRateLimits': { perIp: 5, perToken: 100 } }),
    ).toEqual([
      'koerier:edgeRateLimits.perToken is not a setting (perIp, perAuthorization)',
      expect.stringMatching(/^koerier:edgeRateLimits.perIp must be a whole number from 10 to 2000000000/),
    ]);
    expect(issuesOf({ 'koerier:edgeWebAclArn': ACL })).toEqual([
      'koerier:edgeWebAclArn applies only with koerier:edgeProtection "cloudfront-waf"',
    ]);
  });

  it('WH-7, EDU-20, review #20: the per-client rates from the context reach the functions, and the stack config refuses bad ones with their key', () => {
    const config = parseStackConfig({
      ...valid,
      'koerier:publishRatePerMinute': 90,
      'koerier:manageRatePerMinute': '15',
    });
    const loaded = loadConfig(settingEnvironment(config, 'https://api.example.org'));
    expect(loaded.publishRatePerMinute).toBe(90);
    expect(loaded.manageRatePerMinute).toBe(15);
    expect(() => parseStackConfig({ ...valid, 'koerier:manageRatePerMinute': 0 })).toThrow(
      /koerier:manageRatePerMinute must be a whole number from 1 to 1000000, got 0/,
    );
    // Unset, the functions keep their own defaults.
    const defaults = loadConfig(settingEnvironment(parseStackConfig(valid), 'https://api.example.org'));
    expect({ publish: defaults.publishRatePerMinute, manage: defaults.manageRatePerMinute }).toEqual({
      publish: 6000,
      manage: 600,
    });
  });
});

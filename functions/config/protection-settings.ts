/**
 * Who may do what towards targets, and what protects the API itself: the sink credential policy
 * and the outbound ports (issue 8, items 14 and 19), the management routes' throttle and
 * CloudFront's origin header (review #20).
 */
import { SINK_CREDENTIAL_POLICIES, type SinkCredentialPolicy } from '../core/credentials/sink-credential.js';
import {
  DEFAULT_VALIDATION_HANDSHAKE,
  VALIDATION_HANDSHAKE_CHOICES,
  validationHandshakeOf,
  type ValidationHandshakePolicy,
} from '../core/webhooks/handshake-policy.js';
import { settingEnv } from './setting-names.js';
import { list, type SettingsReader } from './settings-reader.js';

export const DEFAULT_OUTBOUND_PORTS: readonly number[] = [443];

/** Default `oauth2-only`: the Edukoppeling profile wants OAuth2 client credentials towards every party. */
export function readSinkCredentialPolicy(settings: SettingsReader): SinkCredentialPolicy {
  const raw = settings.env[settingEnv.sinkCredentials];
  const value = raw?.trim() || 'oauth2-only';
  if (SINK_CREDENTIAL_POLICIES.includes(value as SinkCredentialPolicy)) return value as SinkCredentialPolicy;
  settings.issues.push(
    `${settingEnv.sinkCredentials} must be ${SINK_CREDENTIAL_POLICIES.join(' or ')}, got ${JSON.stringify(raw)}`,
  );
  return 'oauth2-only';
}

/**
 * Default `required` (NL GOV); the CDK stack always sets it, from the profile's preset. Skipping the
 * handshake rests on the partner's OAuth2 grant (Edukoppeling §3.6), so never with static tokens.
 */
export function readValidationHandshake(
  settings: SettingsReader,
  sinkCredentials: SinkCredentialPolicy,
): ValidationHandshakePolicy {
  const raw = settings.env[settingEnv.validationHandshake];
  if (!raw?.trim()) return DEFAULT_VALIDATION_HANDSHAKE;
  const policy = validationHandshakeOf(raw);
  if (policy === undefined) {
    settings.issues.push(
      `${settingEnv.validationHandshake} must be ${VALIDATION_HANDSHAKE_CHOICES}, got ${JSON.stringify(raw)}`,
    );
    return DEFAULT_VALIDATION_HANDSHAKE;
  }
  if (policy === 'agreed-for-directory-partners' && sinkCredentials !== 'oauth2-only') {
    settings.issues.push(
      `${settingEnv.validationHandshake} "${policy}" needs ${settingEnv.sinkCredentials} "oauth2-only": the partner's OAuth2 grant is its consent`,
    );
  }
  return policy;
}

/** Whole numbers 1–65535, at least one. */
export function parsePortList(raw: string): number[] | undefined {
  const items = list(raw);
  if (!items.every((item) => /^\d{1,5}$/.test(item))) return undefined;
  const ports = items.map(Number);
  if (ports.length === 0 || !ports.every((port) => port >= 1 && port <= 65_535)) return undefined;
  return [...new Set(ports)];
}

export function readOutboundPorts(settings: SettingsReader): readonly number[] {
  const raw = settings.env[settingEnv.outboundPorts];
  if (!raw?.trim()) return DEFAULT_OUTBOUND_PORTS;
  const ports = parsePortList(raw);
  if (ports === undefined)
    settings.issues.push(
      `${settingEnv.outboundPorts} must be a comma-separated list of ports from 1 to 65535, got ${JSON.stringify(raw)}`,
    );
  return ports ?? DEFAULT_OUTBOUND_PORTS;
}

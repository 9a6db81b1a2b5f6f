/**
 * Checks the settings share (issue 31 item 2): unknown keys with the nearest known one, host names
 * that must not be URLs, and the one error message a failed synth prints, one problem a line.
 */
import { knownSettingKeys } from './settings-catalogue.js';

/** One line per `koerier:*` key the list does not know, naming the nearest known key when one is close. */
export function unknownSettingProblems(keys: Iterable<string>): string[] {
  const problems: string[] = [];
  for (const key of keys) {
    if (!key.startsWith('koerier:') || knownSettingKeys.has(key)) continue;
    const nearest = nearestKnownKey(key);
    problems.push(
      `${key} is not a Koerier setting${nearest ? `: did you mean ${nearest}?` : ''} (every setting: docs/DEPLOYING.md, "Settings")`,
    );
  }
  return problems;
}

/** The known key closest to `key` by edit distance (case ignored), when close enough to be a typo. */
export function nearestKnownKey(key: string): string | undefined {
  const name = key.toLowerCase();
  let best: { key: string; distance: number } | undefined;
  for (const known of knownSettingKeys) {
    const distance = editDistance(name, known.toLowerCase());
    if (best === undefined || distance < best.distance) best = { key: known, distance };
  }
  // A third of the name after the prefix: `alarmEmial` (1) and `webhookOrigins` (1) are typos, `color` is not.
  const allowed = Math.max(2, Math.floor((name.length - 'koerier:'.length) / 3));
  return best !== undefined && best.distance <= allowed ? best.key : undefined;
}

/** Optimal string alignment distance: insertions, deletions, substitutions and swaps of neighbours cost 1. */
function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        value = Math.min(value, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = value;
    }
  }
  return rows[a.length]![b.length]!;
}

/** A DNS name (letters, digits, hyphens; dot-separated labels), optionally with a port. */
const HOST_NAME =
  /^(?=.{1,253}(?::\d{1,5})?$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*(?::\d{1,5})?$/i;

/**
 * Why `value` is not a host name, or undefined when it is one. A URL is the likely mistake (the
 * handshake compares `WebHook-Request-Origin`, a bare name, so a URL never matches): the problem
 * then names the host name to give instead.
 */
/** `list`: the setting holds several, and the message says so. */
export function hostNameProblem(value: string, list = false): string | undefined {
  if (HOST_NAME.test(value)) return undefined;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value) || value.includes('/')) {
    const host = hostOfUrl(value);
    return `must ${list ? 'list host names, not URLs' : 'be a host name, not a URL'}${host ? `: give ${host}` : ''}`;
  }
  return `must ${list ? 'list host names' : 'be a host name'} such as koerier.example.org (letters, digits, hyphens and dots)`;
}

function hostOfUrl(value: string): string | undefined {
  try {
    return new URL(value.includes('://') ? value : `https://${value}`).host || undefined;
  } catch {
    return undefined;
  }
}

/** The message of a failed synth: one problem, one line; several, a heading and a line each. */
export function contextProblemsMessage(problems: readonly string[]): string {
  const heading = "Koerier's CDK context is invalid";
  return problems.length === 1
    ? `${heading}: ${problems[0]}`
    : `${heading} (${problems.length} problems):\n${problems.map((line) => `  ${line}`).join('\n')}`;
}

/** An ACM certificate's ARN; the region is captured (the name it serves is checked by ACM at deploy). */
const ACM_CERTIFICATE_ARN = /^arn:aws[a-z-]*:acm:([a-z]{2}(?:-[a-z]+)+-\d):\d{12}:certificate\/[0-9a-f-]{36}$/;

/**
 * Why `value` is not the ARN of an ACM certificate, or undefined when it is one. With `region`,
 * the certificate must be in that region: an API Gateway regional domain name takes its
 * certificate from its own region, and `where` says so in the message.
 */
export function acmCertificateArnProblem(value: string, region?: { name: string; where: string }): string | undefined {
  const match = ACM_CERTIFICATE_ARN.exec(value);
  if (!match) return 'must be the ARN of an ACM certificate, arn:<partition>:acm:<region>:<account>:certificate/<id>';
  if (region !== undefined && match[1] !== region.name)
    return `is a certificate in ${match[1]}, and ${region.where} takes its certificate from ${region.name}: request (or import) it there`;
  return undefined;
}

/** The region an ACM certificate ARN names, or undefined when `value` is no such ARN. */
export function acmCertificateRegion(value: string): string | undefined {
  return ACM_CERTIFICATE_ARN.exec(value)?.[1];
}

/**
 * Which IP addresses Koerier may connect to when it calls out to a subscriber: only globally
 * routable unicast. Everything that reaches into a private network, the host itself or the cloud's
 * metadata service (169.254.169.254) is refused, in every spelling IPv6 offers for it
 * (IPv4-mapped, NAT64, 6to4).
 *
 * Addresses are parsed to bytes here rather than matched as strings, so no notation slips past.
 */
import { isIPv4, isIPv6 } from 'node:net';

export interface AddressVerdict {
  readonly allowed: boolean;
  /** The special-purpose range the address falls in, e.g. `private (RFC 1918)`; absent when public. */
  readonly range?: string;
  /** This host itself: 127.0.0.0/8, ::1, or ::ffff:127.0.0.0/104. */
  readonly loopback?: true;
}

interface Range {
  readonly bytes: readonly number[];
  readonly prefix: number;
  readonly name: string;
}

const v4 = (cidr: string, name: string): Range => {
  const [address, prefix] = cidr.split('/') as [string, string];
  return { bytes: address.split('.').map(Number), prefix: Number(prefix), name };
};

/** IANA IPv4 special-purpose registry, plus multicast and the reserved class E. */
const IPV4_REFUSED: readonly Range[] = [
  v4('0.0.0.0/8', 'this network (RFC 791)'),
  v4('10.0.0.0/8', 'private (RFC 1918)'),
  v4('100.64.0.0/10', 'shared address space / CGNAT (RFC 6598)'),
  v4('127.0.0.0/8', 'loopback'),
  v4('169.254.0.0/16', 'link-local (includes the metadata service 169.254.169.254)'),
  v4('172.16.0.0/12', 'private (RFC 1918)'),
  v4('192.0.0.0/24', 'IETF protocol assignments'),
  v4('192.0.2.0/24', 'documentation (TEST-NET-1)'),
  v4('192.88.99.0/24', '6to4 relay anycast'),
  v4('192.168.0.0/16', 'private (RFC 1918)'),
  v4('198.18.0.0/15', 'benchmarking'),
  v4('198.51.100.0/24', 'documentation (TEST-NET-2)'),
  v4('203.0.113.0/24', 'documentation (TEST-NET-3)'),
  v4('224.0.0.0/4', 'multicast'),
  v4('240.0.0.0/4', 'reserved (includes broadcast)'),
];

const v6 = (hex: string, prefix: number, name: string): Range => ({ bytes: parseIPv6(hex) ?? [], prefix, name });

/** Ranges inside global unicast 2000::/3 that still are not public destinations. */
const IPV6_REFUSED_IN_GLOBAL: readonly Range[] = [
  v6('2001::', 23, 'IETF protocol assignments (Teredo, benchmarking, ORCHID)'),
  v6('2001:db8::', 32, 'documentation'),
  v6('3fff::', 20, 'documentation'),
];

/**
 * IPv6 forms that carry an IPv4 address: judged by that address. The local-use NAT64 prefix
 * 64:ff9b:1::/48 is not among them: it may embed the IPv4 address at other offsets (RFC 6052), so
 * it stays refused whole, as outside global unicast.
 */
const IPV6_EMBEDDING_IPV4: readonly { range: Range; offset: number }[] = [
  { range: v6('::ffff:0:0', 96, 'IPv4-mapped'), offset: 12 },
  { range: v6('64:ff9b::', 96, 'NAT64'), offset: 12 },
  { range: v6('2002::', 16, '6to4'), offset: 2 },
];

const GLOBAL_UNICAST = v6('2000::', 3, 'global unicast');

/**
 * The verdict for one address (IPv4 dotted quad or IPv6, a `%zone` suffix ignored). With
 * `allowLoopback` (the laptop host only) 127.0.0.0/8 and ::1, and their mapped forms, pass;
 * nothing else does that would not pass anyway.
 */
export function judgeAddress(address: string, options: { allowLoopback?: boolean } = {}): AddressVerdict {
  const bare = address.replace(/%.*$/, '');
  if (isIPv4(bare)) return judgeIPv4(bare.split('.').map(Number), options);
  const bytes = isIPv6(bare) ? parseIPv6(bare) : undefined;
  if (!bytes) return { allowed: false, range: 'not an IP address' };

  for (const { range, offset } of IPV6_EMBEDDING_IPV4) {
    if (!inRange(bytes, range)) continue;
    // Only the mapped form reaches this host's own stack; NAT64 and 6to4 hand the packet to a
    // gateway, where "127.0.0.1" is somebody else's loopback: never allowed, never "ours".
    const mapped = range.name === 'IPv4-mapped';
    const inner = judgeIPv4(bytes.slice(offset, offset + 4), mapped ? options : {});
    if (inner.allowed) return inner;
    return {
      allowed: false,
      range: `${range.name} ${inner.range}`,
      ...(mapped && inner.loopback ? { loopback: true as const } : {}),
    };
  }
  if (bytes.every((b, i) => (i === 15 ? b === 1 : b === 0))) {
    return options.allowLoopback
      ? { allowed: true, loopback: true }
      : { allowed: false, range: 'loopback', loopback: true };
  }
  if (!inRange(bytes, GLOBAL_UNICAST)) return { allowed: false, range: describeNonGlobalIPv6(bytes) };
  const refused = IPV6_REFUSED_IN_GLOBAL.find((range) => inRange(bytes, range));
  return refused ? { allowed: false, range: refused.name } : { allowed: true };
}

/** True for 127.0.0.0/8, ::1 and ::ffff:127.0.0.0/104: what the laptop host may reach over plain HTTP. */
export function isLoopbackAddress(address: string): boolean {
  return judgeAddress(address).loopback === true;
}

function judgeIPv4(bytes: readonly number[], options: { allowLoopback?: boolean }): AddressVerdict {
  const refused = IPV4_REFUSED.find((range) => inRange(bytes, range));
  if (!refused) return { allowed: true };
  if (refused.name !== 'loopback') return { allowed: false, range: refused.name };
  return options.allowLoopback
    ? { allowed: true, loopback: true }
    : { allowed: false, range: refused.name, loopback: true };
}

function describeNonGlobalIPv6(bytes: readonly number[]): string {
  const first = bytes[0] ?? 0;
  const second = bytes[1] ?? 0;
  if ((first & 0xfe) === 0xfc) return 'unique local (fc00::/7)';
  if (first === 0xfe && (second & 0xc0) === 0x80) return 'link-local (fe80::/10)';
  if (first === 0xfe && (second & 0xc0) === 0xc0) return 'site-local (fec0::/10)';
  if (first === 0xff) return 'multicast';
  if (bytes.every((b) => b === 0)) return 'unspecified';
  return 'reserved (outside 2000::/3)';
}

function inRange(bytes: readonly number[], range: Range): boolean {
  if (bytes.length !== range.bytes.length) return false;
  let bits = range.prefix;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if (((bytes[i] ?? 0) & mask) !== ((range.bytes[i] ?? 0) & mask)) return false;
  }
  return true;
}

/** 16 bytes of an IPv6 address (with `::` and a dotted-quad tail), or undefined when malformed. */
function parseIPv6(text: string): number[] | undefined {
  let head = text;
  const tail: number[] = [];
  const lastColon = head.lastIndexOf(':');
  const last = head.slice(lastColon + 1);
  if (last.includes('.')) {
    if (!isIPv4(last)) return undefined;
    tail.push(...last.split('.').map(Number));
    head = `${head.slice(0, lastColon + 1)}0:0`;
  }
  const halves = head.split('::');
  if (halves.length > 2) return undefined;
  const groups = (part: string | undefined) => (part ? part.split(':') : []);
  const left = groups(halves[0]);
  const right = groups(halves[1]);
  const missing = 8 - left.length - right.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const words = [...left, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...right];
  const bytes: number[] = [];
  for (const word of words) {
    if (!/^[0-9a-f]{1,4}$/i.test(word)) return undefined;
    const value = parseInt(word, 16);
    bytes.push(value >> 8, value & 0xff);
  }
  if (tail.length === 4) bytes.splice(12, 4, ...tail);
  return bytes;
}

import { describe, expect, it } from 'vitest';
import { isLoopbackAddress, judgeAddress } from '../../../functions/net/ip-address-policy.js';

const refused: readonly [string, string][] = [
  ['0.0.0.0', 'this network'],
  ['0.1.2.3', 'this network'],
  ['10.0.0.1', 'RFC 1918'],
  ['10.255.255.255', 'RFC 1918'],
  ['100.64.0.1', 'CGNAT'],
  ['100.127.255.254', 'CGNAT'],
  ['127.0.0.1', 'loopback'],
  ['127.255.0.9', 'loopback'],
  ['169.254.169.254', 'metadata'],
  ['169.254.0.1', 'link-local'],
  ['172.16.0.1', 'RFC 1918'],
  ['172.31.255.255', 'RFC 1918'],
  ['192.0.0.8', 'IETF protocol'],
  ['192.0.2.10', 'TEST-NET-1'],
  ['192.88.99.1', '6to4 relay'],
  ['192.168.1.1', 'RFC 1918'],
  ['198.18.0.1', 'benchmarking'],
  ['198.19.255.255', 'benchmarking'],
  ['198.51.100.7', 'TEST-NET-2'],
  ['203.0.113.9', 'TEST-NET-3'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['240.0.0.1', 'reserved'],
  ['255.255.255.255', 'broadcast'],
  ['::', 'unspecified'],
  ['::1', 'loopback'],
  ['0:0:0:0:0:0:0:1', 'loopback'],
  ['fc00::1', 'unique local'],
  ['fd12:3456:789a::1', 'unique local'],
  ['fe80::1', 'link-local'],
  ['fe80::1%eth0', 'link-local'],
  ['febf::1', 'link-local'],
  ['fec0::1', 'site-local'],
  ['ff02::1', 'multicast'],
  ['::ffff:127.0.0.1', 'loopback'],
  ['::ffff:7f00:1', 'loopback'],
  ['::ffff:10.0.0.1', 'RFC 1918'],
  ['::ffff:169.254.169.254', 'metadata'],
  ['::ffff:a9fe:a9fe', 'metadata'],
  ['::ffff:100.64.0.1', 'CGNAT'],
  ['::ffff:192.168.0.1', 'RFC 1918'],
  ['64:ff9b::a9fe:a9fe', 'metadata'],
  ['64:ff9b::127.0.0.1', 'loopback'],
  ['64:ff9b:1::10.0.0.1', 'local-use NAT64'],
  ['64:ff9b:1:a00:0:100:808:808', 'local-use NAT64 with 10.0.0.1 at another offset'],
  ['2002:a9fe:a9fe::1', 'metadata'],
  ['2002:0a00:0001::', 'RFC 1918'],
  ['::10.0.0.1', 'reserved'],
  ['2001:db8::1', 'documentation'],
  ['2001::1', 'Teredo'],
  ['3fff::1', 'documentation'],
  ['4000::1', 'reserved'],
  ['not-an-ip', 'not an IP'],
];

describe('the address guard of outbound calls', () => {
  it.each(refused)('SSRF: %s is refused (%s)', (address) => {
    const verdict = judgeAddress(address);
    expect(verdict.allowed).toBe(false);
    expect(verdict.range).toBeTruthy();
  });

  it.each([
    '93.184.216.34',
    '8.8.8.8',
    '1.1.1.1',
    '100.128.0.1',
    '172.32.0.1',
    '192.169.0.1',
    '2a00:1450:4001::1',
    '2606:4700::1111',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:0808:0808::1',
  ])('SSRF: the public address %s is allowed', (address) => {
    expect(judgeAddress(address)).toEqual({ allowed: true });
  });

  it('SSRF: the metadata service is named as such in the refusal', () => {
    expect(judgeAddress('169.254.169.254').range).toMatch(/metadata/);
  });

  it('SSRF: allowLoopback (laptop host) lets 127/8, ::1 and mapped loopback through, and nothing else', () => {
    for (const address of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1']) {
      expect(judgeAddress(address, { allowLoopback: true }).allowed).toBe(true);
    }
    for (const address of [
      '10.0.0.1',
      '169.254.169.254',
      'fe80::1',
      'fd00::1',
      '0.0.0.0',
      '::',
      '64:ff9b::127.0.0.1',
      '2002:7f00:0001::',
    ]) {
      expect(judgeAddress(address, { allowLoopback: true }).allowed).toBe(false);
    }
  });

  it('SSRF: only the host itself counts as loopback (not NAT64 or 6to4 forms of 127.0.0.1)', () => {
    expect(isLoopbackAddress('127.0.0.1')).toBe(true);
    expect(isLoopbackAddress('::1')).toBe(true);
    expect(isLoopbackAddress('::ffff:127.0.0.1')).toBe(true);
    expect(isLoopbackAddress('64:ff9b::7f00:1')).toBe(false);
    expect(isLoopbackAddress('2002:7f00:1::')).toBe(false);
    expect(isLoopbackAddress('10.0.0.1')).toBe(false);
  });
});

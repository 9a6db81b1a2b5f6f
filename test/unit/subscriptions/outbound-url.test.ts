import { describe, expect, it } from 'vitest';
import { judgeAddress } from '../../../functions/net/ip-address-policy.js';
import {
  isLoopbackHost,
  outboundUrlProblem,
  type OutboundUrlRules,
} from '../../../functions/core/subscriptions/outbound-url.js';

const aws: OutboundUrlRules = { allowLoopback: false, allowedPorts: [443] };
const laptop: OutboundUrlRules = { allowLoopback: true, allowedPorts: [443] };
/** The rule the connection itself keeps, as the service wires it. */
const judged: OutboundUrlRules['refusedAddressRange'] = (address) => {
  const verdict = judgeAddress(address, { allowLoopback: false });
  return verdict.allowed ? undefined : (verdict.range ?? 'not public');
};
const ruleOf = (text: string, rules: OutboundUrlRules = aws) => {
  const problem = outboundUrlProblem(text, 'sink', rules);
  return problem === undefined ? undefined : `${problem.rule}:${problem.requirement}`;
};

describe('a URL Koerier calls on a subscriber’s behalf', () => {
  it('EDU-14: a URL is at most 2,048 characters; one of exactly 2,048 is taken', () => {
    const base = 'https://ontvanger.example/';
    expect(ruleOf(base + 'a'.repeat(2048 - base.length))).toBeUndefined();
    expect(ruleOf(base + 'a'.repeat(2049 - base.length))).toBe('too-long:EDU-14');
  });

  it('WH-3: a user name alone in the URL is a credential in the URL too', () => {
    expect(ruleOf('https://koerier@ontvanger.example/hook')).toBe('no-userinfo:WH-3');
    expect(ruleOf('https://:secret@ontvanger.example/hook')).toBe('no-userinfo:WH-3');
  });

  it('WH-1: the laptop host’s loopback exception is for plain http only, not for any other scheme', () => {
    expect(ruleOf('ftp://127.0.0.1/hook', laptop)).toBe('https:WH-1');
    expect(ruleOf('ws://localhost/hook', laptop)).toBe('https:WH-1');
    expect(ruleOf('http://127.0.0.1:8080/hook', laptop)).toBeUndefined();
  });

  it('WH-1: loopback is 127.0.0.0/8 with any octets, localhost and [::1]; a host name that merely starts like one is not', () => {
    expect(ruleOf('http://[::1]:8080/hook', laptop)).toBeUndefined();
    expect(ruleOf('http://127.100.200.250:8080/hook', laptop)).toBeUndefined();
    // A public DNS name can spell anything: only the address itself makes a loopback target.
    expect(ruleOf('http://127.0.0.1.ontvanger.example/hook', laptop)).toBe('https:WH-1');
    expect(isLoopbackHost('127.0.0.1.ontvanger.example')).toBe(false);
  });

  it('WH-1: without an address rule (a deployment that sets none) a literal address is left to the connection', () => {
    expect(ruleOf('https://93.184.216.34/hook')).toBeUndefined();
    expect(ruleOf('https://[2606:4700::1111]/hook')).toBeUndefined();
  });

  it('WH-1, issue 12 item 8: a public IPv6 literal is judged as the address itself, and taken', () => {
    const rules = { ...aws, refusedAddressRange: judged };
    expect(ruleOf('https://[2606:4700::1111]/hook', rules)).toBeUndefined();
    expect(ruleOf('https://[fd00::1]/hook', rules)).toBe('public-address:WH-1');
  });

  it('WH-1, issue 12 item 8: a host name is judged when Koerier connects, not when given, even one that begins with a private address', () => {
    // DNS can change after the check, so the SSRF guard at connect time is the rule for names; refusing
    // a name here by its spelling would turn away legitimate hosts.
    const rules = { ...aws, refusedAddressRange: judged };
    expect(ruleOf('https://10.0.0.5.ontvanger.example/hook', rules)).toBeUndefined();
    expect(ruleOf('https://10.0.0.5/hook', rules)).toBe('public-address:WH-1');
  });
});

/**
 * Where the `koerier` CLI may send a client secret (issue 28, item 10): the token URL rule, and the
 * refusal to use a profile's stored secret or cached tokens for a gateway it was not logged in to —
 * decided before any request is made (the end-to-end proof with real servers is
 * test/e2e/cli-login-secrets.test.ts).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ConfigStore } from '../../../cli/config-store.js';
import { resolveSettings } from '../../../cli/settings.js';
import { cachedTokens, checkTokenUrl, isLoopbackHost } from '../../../cli/tokens.js';

describe('the token URL (issue 28, item 10)', () => {
  it('EDU-2, issue 28 item 10: loopback is localhost, 127.0.0.0/8 and ::1, and nothing that only looks like them', () => {
    for (const host of ['localhost', 'LOCALHOST', '127.0.0.1', '127.255.3.4', '[::1]', '::1'])
      expect(isLoopbackHost(host), host).toBe(true);
    for (const host of [
      'localhost.example.org',
      '127.0.0.1.nip.io',
      '128.0.0.1',
      '10.0.0.1',
      '[::2]',
      'example.org',
      '',
    ]) {
      expect(isLoopbackHost(host), host).toBe(false);
    }
  });

  it('EDU-2, issue 28 item 10: https anywhere, http only to loopback (as the URL parser reads the host), nothing else', () => {
    for (const url of [
      'https://login.example.org/oauth2/token',
      'http://127.0.0.1:3000/oauth/token',
      'http://localhost/token',
      'http://[::1]:8080/t',
      'http://2130706433/t',
    ]) {
      expect(() => checkTokenUrl(url), url).not.toThrow();
    }
    for (const url of [
      'http://login.example.org/token',
      'http://192.0.2.7/token',
      'http://localhost.example.org/token',
      'ftp://127.0.0.1/token',
      'file:///etc/passwd',
    ]) {
      expect(() => checkTokenUrl(url), url).toThrow(/refusing to send a client secret/);
    }
    expect(() => checkTokenUrl('not a url')).toThrow(/is not a URL/);
  });
});

describe("a profile's stored credentials (issue 28, item 10)", () => {
  let home: string;
  const fetchSpy = vi.spyOn(globalThis, 'fetch');
  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'koerier-token-url-'));
    const store = new ConfigStore(join(home, 'koerier'));
    await store.saveProfile('pinned', {
      url: 'https://gateway.example.org/v1',
      tokenUrl: 'https://login.example.org/token',
      clientId: 'partner',
    });
    await store.saveProfile('unpinned', { url: 'https://gateway.example.org/v1', clientId: 'partner' });
    for (const profile of ['pinned', 'unpinned']) await store.saveSecret(profile, 'partner', 'stored-secret');
  });
  afterAll(async () => {
    fetchSpy.mockRestore();
    await rm(home, { recursive: true, force: true });
  });

  const tokenFor = async (profile: string, url?: string) => {
    const settings = await resolveSettings({ profile, ...(url ? { url } : {}) }, { XDG_CONFIG_HOME: home });
    return cachedTokens(settings).token();
  };

  it('EDU-2, issue 28 item 10: for another gateway, or a profile with no token URL pinned, the stored secret is refused before any request, saying to log in again', async () => {
    await expect(tokenFor('pinned', 'https://other.example.net/v1')).rejects.toThrow(
      'profile pinned was logged in to https://gateway.example.org/v1, not https://other.example.net/v1',
    );
    await expect(tokenFor('unpinned')).rejects.toThrow(
      'profile unpinned has no token URL pinned for https://gateway.example.org/v1. Log in again',
    );
    expect(fetchSpy).not.toHaveBeenCalled();
  });
});

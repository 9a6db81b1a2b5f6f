/**
 * `--help` and shell completion of the real `koerier` binary (issue 16 item 1: "--help on every
 * command, shell completion"): the help of the contract register's writes and of replay cancel, and
 * the bash completion script sourced into a real bash, asked to complete as a user's Tab would;
 * `koerier doctor` (issue 27 §3) among them.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { cliUser, KOERIER_BIN, type CliUser } from '../support/koerier-cli.js';

vi.setConfig({ testTimeout: 60_000 });

let cli: CliUser;
beforeAll(async () => {
  cli = await cliUser('http://127.0.0.1:9/v1');
});
afterAll(async () => {
  await cli?.remove();
});

describe('koerier --help', () => {
  it.each([
    [
      ['contracts', 'publish', '--help'],
      [
        'Usage: koerier contracts publish [options] <name> <version> <file>',
        '--kind <kind>',
        '--force',
        '--owner-email',
        'EDU-22',
        'Exit 1',
      ],
    ],
    [
      ['contracts', 'update', '--help'],
      ['Usage: koerier contracts update [options] <name> [version]', '--status <status>', '--contact-url'],
    ],
    [
      ['contracts', 'deprecate', '--help'],
      ['Usage: koerier contracts deprecate [options] <name> <version>', '--sunset <date>'],
    ],
    [
      ['replay', 'cancel', '--help'],
      ['Usage: koerier replay cancel [options] <subscription> <replay>', 'replay-not-running'],
    ],
    [['listen', '--help'], ['--rate <per-minute>']],
    [
      ['contracts', 'bind', '--help'],
      ['Usage: koerier contracts bind [options] <type> <name> <version>', '--mode <mode>', 'enforce'],
    ],
    [
      ['contracts', 'document', '--help'],
      ['Usage: koerier contracts document [options] <name> <version>', '--output <file>'],
    ],
    [
      ['doctor', '--help'],
      [
        'Usage: koerier doctor [options]',
        '--consumer-client-id <id>',
        '--source <prefix>',
        'subscriptions:manage and events:consume',
        '130 on Ctrl-C',
      ],
    ],
    [
      ['contracts', '--help'],
      [
        'publish [options] <name> <version> <file>',
        'update [options] <name> [version]',
        'deprecate [options] <name> <version>',
      ],
    ],
  ])('koerier %j prints its usage and options and exits 0', async (args, expected) => {
    const help = await cli.run(args);
    expect(help.code, help.stderr).toBe(0);
    for (const text of expected) expect(help.stdout).toContain(text);
  });
});

describe('koerier completion', () => {
  /** What bash offers after `words` (the last one being typed), with the script the binary prints sourced. */
  async function complete(...words: string[]): Promise<string[]> {
    const line = ['koerier', ...words].map((word) => `'${word}'`).join(' ');
    const script = `source <("$KOERIER_BIN" completion bash); COMP_WORDS=(${line}); COMP_CWORD=${words.length}; _koerier; printf '%s\\n' "\${COMPREPLY[@]}"`;
    const { stdout } = await promisify(execFile)('bash', ['-c', script], {
      env: { ...process.env, KOERIER_BIN },
      cwd: cli.cwd,
    });
    return stdout.split('\n').filter(Boolean);
  }

  it('completes the new subcommands and their options in a real bash: contracts publish/update/deprecate, replay cancel', async () => {
    expect(await complete('contracts', '')).toEqual(
      expect.arrayContaining([
        'list',
        'show',
        'document',
        'publish',
        'update',
        'deprecate',
        'bind',
        'unbind',
        'bindings',
      ]),
    );
    expect(await complete('contracts', 'p')).toEqual(['publish']);
    expect(await complete('contracts', 'publish', '--f')).toEqual(['--force']);
    expect(await complete('contracts', 'deprecate', '--su')).toEqual(['--sunset']);
    expect(await complete('replay', 'c')).toEqual(['cancel']);
    expect(await complete('listen', '--r')).toEqual(expect.arrayContaining(['--rate']));
  });

  it('completes koerier doctor and its consumer options in a real bash', async () => {
    expect(await complete('doc')).toEqual(['doctor']);
    expect(await complete('doctor', '--consumer-c')).toEqual(['--consumer-client-id', '--consumer-client-secret-file']);
    expect(await complete('doctor', '--t')).toEqual(expect.arrayContaining(['--type', '--timeout', '--token-url']));
  });
});

/**
 * Self time of a V8 CPU profile (`.cpuprofile`), grouped by where the code lives: a package under
 * node_modules, Koerier's own areas, Node's internals, idle and GC. Prints the groups and the
 * heaviest functions, as shares of all samples.
 * Usage: tsx bench/support/cpu-profile-summary.ts <file.cpuprofile> [top functions, default 25]
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
}

interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** The group a frame's self time belongs to. */
export function groupOf(url: string, functionName: string): string {
  if (functionName === '(idle)') return 'idle';
  if (functionName === '(garbage collector)') return 'garbage collection';
  if (functionName === '(program)') return 'V8 (program)';
  const packageMatch = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (packageMatch) return `package ${packageMatch[1]}`;
  if (url.startsWith('node:') || url === '')
    return `node ${
      url
        .replace(/^node:/, '')
        .split('/')
        .slice(0, 2)
        .join('/') || '(native)'
    }`;
  const own = /\/(functions\/[^/]+(?:\/[^/]+)?|local|bench|test\/support|lib)\//.exec(url);
  return own ? `koerier ${own[1]}` : `other ${url}`;
}

export function summarise(profile: CpuProfile): {
  totalMs: number;
  groups: [string, number][];
  functions: [string, number][];
} {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map<number, number>();
  for (const [index, id] of profile.samples.entries())
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0));
  const total = [...selfUs.values()].reduce((sum, us) => sum + us, 0);
  const groups = new Map<string, number>();
  const functions = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const { callFrame } = byId.get(id)!;
    const group = groupOf(callFrame.url, callFrame.functionName);
    groups.set(group, (groups.get(group) ?? 0) + us);
    const name = `${callFrame.functionName || '(anonymous)'} ${callFrame.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*?\/(functions|local|bench|test)\//, '$1/')}:${callFrame.lineNumber + 1}`;
    functions.set(name, (functions.get(name) ?? 0) + us);
  }
  const share = (entries: Map<string, number>) =>
    [...entries].map(([key, us]): [string, number] => [key, us / total]).sort((a, b) => b[1] - a[1]);
  return { totalMs: total / 1000, groups: share(groups), functions: share(functions) };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [file, top = '25'] = process.argv.slice(2);
  if (!file) throw new Error('usage: tsx bench/support/cpu-profile-summary.ts <file.cpuprofile> [top]');
  const { totalMs, groups, functions } = summarise(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile);
  const percent = (share: number) => `${(share * 100).toFixed(1).padStart(5)} %`;
  process.stdout.write(`${totalMs.toFixed(0)} ms sampled\n\ngroups:\n`);
  for (const [group, share] of groups.filter(([, s]) => s >= 0.002))
    process.stdout.write(`${percent(share)}  ${group}\n`);
  process.stdout.write('\nfunctions:\n');
  for (const [name, share] of functions.slice(0, Number(top))) process.stdout.write(`${percent(share)}  ${name}\n`);
}

/**
 * `koerier completion bash|zsh`: a completion script made from the command tree itself, so it
 * never lags behind the commands. `source <(koerier completion bash)`, or for zsh
 * `source <(koerier completion zsh)`.
 */
import { Argument, type Command } from 'commander';

export function registerCompletion(program: Command): void {
  program
    .command('completion')
    .description('print a shell completion script (source <(koerier completion bash))')
    .addArgument(new Argument('[shell]', 'the shell').choices(['bash', 'zsh']).default('bash'))
    .action((shell: 'bash' | 'zsh') => {
      process.stdout.write(completionScript(program, shell));
    });
}

function optionsOf(command: Command): string[] {
  return [
    ...command.options.flatMap((option) => [option.long, option.short].filter((flag): flag is string => Boolean(flag))),
    '--help',
  ];
}

export function completionScript(program: Command, shell: 'bash' | 'zsh'): string {
  const globals = optionsOf(program);
  const cases: string[] = [];
  for (const command of program.commands) {
    const names = [command.name(), ...command.aliases()];
    const subcommands = command.commands.map((sub) => sub.name());
    cases.push(
      `    ${names.map((name) => `"${name}"`).join('|')}) words="${[...subcommands, ...optionsOf(command), ...globals].join(' ')}" ;;`,
    );
    for (const sub of command.commands) {
      cases.push(
        `    ${names.map((name) => `"${name} ${sub.name()}"`).join('|')}) words="${[...optionsOf(sub), ...globals].join(' ')}" ;;`,
      );
    }
  }
  const bash = `# koerier completion (bash); source <(koerier completion bash)
_koerier() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path="" words i
  for ((i = 1; i < COMP_CWORD && i < 3; i++)); do
    case "\${COMP_WORDS[i]}" in -*) ;; *) path="\${path:+$path }\${COMP_WORDS[i]}" ;; esac
  done
  case "$path" in
    "") words="${[...program.commands.map((command) => command.name()), ...globals].join(' ')}" ;;
${cases.join('\n')}
    *) words="${globals.join(' ')}" ;;
  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
  [[ \${#COMPREPLY[@]} -eq 0 ]] && COMPREPLY=($(compgen -f -- "$cur"))
  return 0
}
complete -F _koerier koerier
`;
  return shell === 'bash'
    ? bash
    : `# koerier completion (zsh); source <(koerier completion zsh)\nautoload -U +X bashcompinit && bashcompinit\n${bash}`;
}

/**
 * Issue 15, item 4: each Lambda handler lists the adapters it is composed with
 * (`lambdaDependencies('router', { routeIndex, … })`), and only those are bundled. A member its
 * code reads and its list lacks would throw on the first request in AWS, while the laptop host
 * (which composes every adapter) and the emulated tests would never notice; a member listed and
 * never read is bundle weight for nothing. So the lists are checked against the code, statically,
 * with the TypeScript checker: every read of a `KoerierDependencies` member (`deps.x`,
 * `const { x } = deps`) in the files a handler's module graph reaches under functions/.
 */
import path from 'node:path';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import { functions } from '../../../functions/config/resources.js';

const ROOT = path.join(import.meta.dirname, '..', '..', '..');
const DEPENDENCIES_FILE = path.join(ROOT, 'functions', 'app', 'dependencies.ts');
/** Every set has these from the start (functions/composition/composition.ts). */
const EAGER = new Set(['config', 'log', 'admission']);

let program: ts.Program;
let checker: ts.TypeChecker;

beforeAll(() => {
  const config = ts.getParsedCommandLineOfConfigFile(
    path.join(ROOT, 'tsconfig.json'),
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
  );
  program = ts.createProgram(
    Object.values(functions).map((spec) => path.join(ROOT, spec.entry)),
    config!.options,
  );
  checker = program.getTypeChecker();
}, 60_000);

function sourceFile(file: string): ts.SourceFile {
  const found = program.getSourceFile(file);
  if (found === undefined) throw new Error(`${file} is not in the program`);
  return found;
}

/** The files under functions/ that `entry` imports, directly or through others (itself included). */
function moduleGraph(entry: string): ts.SourceFile[] {
  const seen = new Map<string, ts.SourceFile>();
  const visit = (file: ts.SourceFile) => {
    if (seen.has(file.fileName) || !file.fileName.startsWith(path.join(ROOT, 'functions'))) return;
    seen.set(file.fileName, file);
    for (const statement of file.statements) {
      if ((ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) && statement.moduleSpecifier) {
        const declaration = checker.getSymbolAtLocation(statement.moduleSpecifier)?.valueDeclaration;
        if (declaration && ts.isSourceFile(declaration)) visit(declaration);
      }
    }
  };
  visit(sourceFile(entry));
  return [...seen.values()];
}

/** Whether `symbol` is a member of `KoerierDependencies` (or of a `Pick` of it, whose members point back to it). */
function isDependency(symbol: ts.Symbol | undefined): boolean {
  return (symbol?.declarations ?? []).some(
    (declaration) =>
      declaration.getSourceFile().fileName === DEPENDENCIES_FILE &&
      ts.isInterfaceDeclaration(declaration.parent) &&
      declaration.parent.name.text === 'KoerierDependencies',
  );
}

/** Every `KoerierDependencies` member the files read. */
function membersRead(files: readonly ts.SourceFile[]): Set<string> {
  const read = new Set<string>();
  const visit = (node: ts.Node): void => {
    if (ts.isPropertyAccessExpression(node) && isDependency(checker.getSymbolAtLocation(node.name)))
      read.add(node.name.text);
    if (ts.isObjectBindingPattern(node)) {
      const type = checker.getTypeAtLocation(node);
      for (const element of node.elements) {
        const name = element.propertyName ?? element.name;
        if (ts.isIdentifier(name) && isDependency(type.getProperty(name.text))) read.add(name.text);
      }
    }
    ts.forEachChild(node, visit);
  };
  for (const file of files) visit(file);
  return read;
}

/** The names in the handler's `lambdaDependencies('…', { … })` list. */
function listedAdapters(entry: string): string[] {
  let listed: string[] | undefined;
  const visit = (node: ts.Node): void => {
    if (
      ts.isCallExpression(node) &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === 'lambdaDependencies'
    ) {
      const list = node.arguments[1];
      if (list === undefined || !ts.isObjectLiteralExpression(list))
        throw new Error(`${entry}: lambdaDependencies needs an object literal of builders`);
      listed = list.properties.map((property) => {
        if (!ts.isShorthandPropertyAssignment(property) && !ts.isPropertyAssignment(property))
          throw new Error(`${entry}: only named builders in the list`);
        return property.name.getText();
      });
    }
    ts.forEachChild(node, visit);
  };
  visit(sourceFile(entry));
  if (listed === undefined) throw new Error(`${entry} does not call lambdaDependencies`);
  return listed;
}

describe('issue 15, item 4: each function is composed with exactly the adapters its code reads', () => {
  for (const [name, spec] of Object.entries(functions)) {
    it(`issue 15: ${name} (${spec.entry}) lists every dependency its module graph reads, and no other`, () => {
      const entry = path.join(ROOT, spec.entry);
      const read = [...membersRead(moduleGraph(entry))].filter((member) => !EAGER.has(member)).sort();
      expect(listedAdapters(entry).sort()).toEqual(read);
    });
  }

  it('issue 15: the check sees reads through a Pick of the dependencies, destructuring and helpers (it would catch a missing adapter)', () => {
    // signing-keys-app.ts takes Pick<KoerierDependencies, 'signingKeys'>; pull-app.ts destructures and
    // reaches the claim check through claim-check-reading.ts; every handler's edge flushes the metrics.
    expect(membersRead(moduleGraph(path.join(ROOT, functions.signingKeys.entry)))).toContain('signingKeys');
    const pull = membersRead(moduleGraph(path.join(ROOT, functions.pull.entry)));
    expect([...pull]).toEqual(expect.arrayContaining(['config', 'log', 'claimCheckStore', 'payloadLedger', 'metrics']));
  });
});

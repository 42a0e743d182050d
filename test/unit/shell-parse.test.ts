/**
 * The run_command parser (src/engine/permissions/shell-parse.ts): words and quoting, chains,
 * environment prefixes, sudo, redirections, and the constructs it refuses to see through
 * (opaque: the caller asks).
 */
import { strict as assert } from 'node:assert';
import { describeCommand, parseCommandLine, type SimpleCommand } from '../../src/engine/permissions/shell-parse';

function parsed(line: string): SimpleCommand[] {
  const p = parseCommandLine(line);
  assert.equal(p.kind, 'parsed', `expected ${line} to parse, got ${JSON.stringify(p)}`);
  return p.kind === 'parsed' ? p.commands : [];
}
function opaque(line: string): string {
  const p = parseCommandLine(line);
  assert.equal(p.kind, 'opaque', `expected ${line} to be opaque, got ${JSON.stringify(p)}`);
  return p.kind === 'opaque' ? p.reason : '';
}

describe('shell-parse: command lines', () => {
  it('splits words and removes quoting: single, double, backslash', () => {
    assert.deepEqual(parsed(`git commit -m 'fix: a && b' "x y" a\\ b`)[0]!.argv, ['git', 'commit', '-m', 'fix: a && b', 'x y', 'a b']);
    assert.deepEqual(parsed(`echo "say \\"hi\\"" 'it''s'`)[0]!.argv, ['echo', 'say "hi"', 'its']);
  });

  it('splits chains on && || ; | & and newlines: every sub-command comes out', () => {
    const cmds = parsed('npm test && npm run lint || echo failed; ls | wc -l\nrm -rf build & true');
    assert.deepEqual(cmds.map((c) => c.argv), [['npm', 'test'], ['npm', 'run', 'lint'], ['echo', 'failed'], ['ls'], ['wc', '-l'], ['rm', '-rf', 'build'], ['true']]);
  });

  it('operators inside quotes are words, not chains', () => {
    assert.deepEqual(parsed(`echo "a && rm -rf /"`).map((c) => c.argv), [['echo', 'a && rm -rf /']]);
  });

  it('takes environment prefixes (also after env) apart from the command', () => {
    const [c] = parsed('FOO=1 BAR="two words" npm test');
    assert.deepEqual(c!.env, { FOO: '1', BAR: 'two words' });
    assert.deepEqual(c!.argv, ['npm', 'test']);
    const [d] = parsed('env -i CI=true npm test');
    assert.deepEqual([d!.env, d!.argv], [{ CI: 'true' }, ['npm', 'test']]);
    // A quoted assignment is a word, not an environment prefix.
    assert.deepEqual(parsed(`'A=1' x`)[0]!.argv, ['A=1', 'x']);
  });

  it('sees through sudo and its options', () => {
    const [c] = parsed('sudo -u root -E rm -rf /');
    assert.equal(c!.sudo, true);
    assert.deepEqual(c!.argv, ['rm', '-rf', '/']);
    assert.equal(parsed('rm x')[0]!.sudo, false);
  });

  it('records files written by redirections (not /dev/null, not fd duplication)', () => {
    const [c] = parsed('npm test > out.log 2>&1');
    assert.deepEqual([c!.argv, c!.writesTo], [['npm', 'test'], ['out.log']]);
    assert.deepEqual(parsed('npm test >/dev/null 2>/dev/null')[0]!.writesTo, []);
    assert.deepEqual(parsed('echo x >> .github/ci.yml')[0]!.writesTo, ['.github/ci.yml']);
    assert.deepEqual(parsed('cat < in.txt')[0]!.writesTo, []);
  });

  it('is opaque for what it cannot check: substitutions, subshells, groups, expansions, here-docs, broken quotes', () => {
    assert.match(opaque('echo $(rm -rf /)'), /\$\( \)/);
    assert.match(opaque('echo `whoami`'), /`/);
    assert.match(opaque('echo "$(id)"'), /\$\( \)/);
    assert.match(opaque('(cd x && rm -rf .)'), /subshell/);
    assert.match(opaque('{ rm -rf x; }'), /group/);
    assert.match(opaque('rm -rf $HOME'), /expansion/);
    assert.match(opaque('diff <(ls a) <(ls b)'), /process substitution/);
    assert.match(opaque('cat <<EOF\nx\nEOF'), /here-document/);
    assert.match(opaque(`echo 'unterminated`), /unterminated/);
    assert.match(opaque('&& ls'), /without a command/);
    // $ inside single quotes is literal.
    assert.deepEqual(parsed(`echo '$(not run)'`)[0]!.argv, ['echo', '$(not run)']);
  });

  it('describes a sub-command as one re-quoted line', () => {
    assert.equal(describeCommand(parsed(`FOO=1 sudo rm -rf 'my dir' > log`)[0]!), `FOO=1 sudo rm -rf 'my dir' > log`);
  });
});

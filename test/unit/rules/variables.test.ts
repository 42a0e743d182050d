/** System prompt $variables (SPEC 6.2): all eight with an injected clock, locale and zone; unknown untouched; `$` in values; one pass. */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isoWithOffset, resolveVariables, variableValues, VARIABLE_NAMES, type VariableValues } from '../../../src/engine/rules/variables';
import { RulesService, currentBranch } from '../../../src/engine/rules/service';
import { environmentHost } from '../../../src/engine/host';
import { makeTmpDir, removeTmpDir } from '../../support/tmp';

const NOW = new Date('2026-03-29T00:30:05.250Z');
const values = (o: Partial<Parameters<typeof variableValues>[0]> = {}) =>
  variableValues({ now: NOW, timeZone: 'Europe/Paris', locale: 'fr-CA', platform: 'linux/x64', workspaceRoot: 'shop', gitBranch: 'main', activeSpoke: 'coding', ...o });

describe('$variables', () => {
  it('all eight, from injected inputs', () => {
    const text = VARIABLE_NAMES.map((n) => `${n}=$${n}`).join('\n');
    assert.equal(resolveVariables(text, values()), [
      'current_datetime=2026-03-29T01:30:05+01:00', 'user_timezone=Europe/Paris', 'user_locale=fr-CA', 'user_language=fr',
      'user_platform=linux/x64', 'workspace_root=shop', 'git_branch=main', 'active_spoke=coding',
    ].join('\n'));
  });

  it('ISO-8601 with the zone\'s offset, across a DST change and for negative and half-hour offsets', () => {
    assert.equal(isoWithOffset(new Date('2026-03-29T01:30:00Z'), 'Europe/Paris'), '2026-03-29T03:30:00+02:00');
    assert.equal(isoWithOffset(new Date('2026-01-15T12:00:00Z'), 'America/New_York'), '2026-01-15T07:00:00-05:00');
    assert.equal(isoWithOffset(new Date('2026-01-15T12:00:00Z'), 'Asia/Kolkata'), '2026-01-15T17:30:00+05:30');
    assert.equal(isoWithOffset(new Date('2026-01-15T12:00:00Z'), 'UTC'), '2026-01-15T12:00:00+00:00');
  });

  it('unknown $words, a lone $, $$ and longer names stay as they are', () => {
    const v = values();
    for (const s of ['$unknown', 'cost: 5$', '$', '$$git_branch', '$git_branches', 'a$ b', '$USER_LOCALE', '${git_branch}']) assert.equal(resolveVariables(s, v), s, s);
    assert.equal(resolveVariables('on $git_branch.', v), 'on main.');
  });

  it('one pass: a value containing $variables is never substituted again', () => {
    const v: VariableValues = { ...values(), workspace_root: '$user_locale', git_branch: 'feat/$current_datetime$$' };
    assert.equal(resolveVariables('$workspace_root|$git_branch|$user_locale', v), '$user_locale|feat/$current_datetime$$|fr-CA');
  });

  it('active spoke and language follow their inputs', () => {
    assert.equal(values({ activeSpoke: 'planning' }).active_spoke, 'planning');
    assert.equal(values({ locale: 'pt_BR' }).user_language, 'pt');
  });

  describe('in the engine', () => {
    let dir: string;
    beforeEach(() => {
      dir = makeTmpDir('vox-vars-');
    });
    afterEach(() => removeTmpDir(dir));

    it('the git branch: the current one, HEAD when detached, empty outside a repository', async () => {
      assert.equal(currentBranch(dir), '');
      const g = (...a: string[]) => execFileSync('git', a, { cwd: dir, stdio: 'pipe' });
      g('init', '-q', '-b', 'feature-x');
      fs.mkdirSync(path.join(dir, 'src'));
      assert.equal(currentBranch(dir), 'feature-x');
      assert.equal(currentBranch(path.join(dir, 'src')), 'feature-x', 'from a folder inside the repository');
      g('-c', 'user.email=t@t', '-c', 'user.name=t', 'commit', '-q', '--allow-empty', '-m', 'one');
      const linked = path.join(dir, 'linked');
      g('worktree', 'add', '-q', '-b', 'other', linked);
      assert.equal(currentBranch(linked), 'other', 'a linked worktree');
      g('checkout', '-q', '--detach');
      assert.equal(currentBranch(dir), 'HEAD');
    });

    it('the system prompt and rule bodies resolve, with the user\'s addition', async () => {
      fs.mkdirSync(path.join(dir, '.vox/rules'), { recursive: true });
      fs.writeFileSync(path.join(dir, '.vox/rules/when.md'), '---\nattach: always\n---\nIt is $current_datetime on $user_platform in $workspace_root.');
      const host = environmentHost({ model: 'local:demo', notify: () => undefined, rules: { systemPromptAppend: 'Speak $user_language. Cost: $5.' } });
      const rules = new RulesService({ workspaceRoot: dir, host, now: () => NOW, locale: 'de-DE', timeZone: 'UTC', watch: false, systemPrompt: 'Base at $current_datetime ($user_timezone).' });
      assert.equal(await rules.systemPrompt(null), 'Base at 2026-03-29T00:30:05+00:00 (UTC).\n\nSpeak de. Cost: $5.');
      const p = await rules.prepare('hi', [], null);
      assert.match(p.block, new RegExp(`It is 2026-03-29T00:30:05\\+00:00 on ${process.platform}/${process.arch} in ${path.basename(dir)}\\.`));
      rules.dispose();
    });
  });
});

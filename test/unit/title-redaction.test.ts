/**
 * A title cut from a longer text (a new thread's prompt, an imported session's first line, a
 * variant group's prompt) never keeps part of a secret: the text is redacted before it is cut,
 * so a credential straddling the cut — which no rule matches once cut — is already gone.
 */
import { strict as assert } from 'node:assert';
import { THREAD_TITLE_PROMPT_CHARS, titleFromPrompt } from '../../src/engine/runs/registry';
import { titleFrom } from '../../src/engine/importers/types';
import { variantGroupTitle } from '../../src/engine/variants/pool';
import { VARIANT_TITLE_PROMPT_CHARS } from '../../src/engine/variants/types';

const GITHUB = `ghp_${'R7t9Kq2LmX4vB8nP3sD6fG1hJ5kL0zXcV9bN'.slice(0, 36)}`;
const POSTGRES = 'postgres://admin:Sup3rS3cretPassw0rd@db.internal:5432/app';
const JWT = 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI5ODc2NTQzMjEwIiwibmFtZSI6Ik1hbGxvcnkiLCJpYXQiOjE1MTYyMzkwMjJ9.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c';

describe('titles cut from text are redacted first', () => {
  for (const [name, cut, max] of [
    ['a new thread', titleFromPrompt, THREAD_TITLE_PROMPT_CHARS],
    ['an imported session', titleFrom, 80],
    ['a variant group', (s: string) => variantGroupTitle(2, s), VARIANT_TITLE_PROMPT_CHARS],
  ] as const) {
    it(`${name}: a secret across the cut leaves no part of itself`, () => {
      // The secret part of each: the token, the URL's password (its user name is not secret).
      for (const [secret, core] of [[GITHUB, 'ghp_R7t9'], [POSTGRES, 'Sup3r']] as const) {
        const title = cut(`${'y'.repeat(max - 20)} ${secret} and more words after it`);
        assert.ok(!title.includes(core), `${name} title keeps a secret's start: ${title}`);
      }
      const jwtTitle = cut(`${JWT} is the token`);
      assert.ok(!jwtTitle.includes('eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9'), `${name} title keeps a JWT's header: ${jwtTitle}`);
      assert.ok(cut('fix the failing test').includes('fix the failing test'));
    });
  }
});

/**
 * Accessibility of the built webviews (headless Chromium, strict CSP, fake host; ./support/page.ts),
 * checked with axe-core (./support/axe.ts; serious and critical violations fail): the chat with a
 * conversation — messages, a plan card, a streaming answer, a tool call waiting for approval —,
 * the composer with chips and the mention popup open, and the compare tab. Then what a screen
 * reader hears: the polite live region gets the streamed text in sentence and paragraph chunks
 * (never the whole message again per delta) and the run's status (thinking, waiting for approval,
 * done). Skipped (with a message) when /usr/bin/chromium is absent.
 */
import { strict as assert } from 'node:assert';
import type { Page } from 'playwright-core';
import { axeViolations, describeFindings, useTheme } from './support/axe';
import { openWebviewPage, type WebviewPage } from './support/browser';

const T = 'thread:a11y';
const R1 = 'run:a11y:0';
const R2 = 'run:a11y:1';
const R3 = 'run:a11y:2';
const PLAN = 'plan:a11y';

describe('webview accessibility in Chromium: axe-core and the live region', function () {
  this.timeout(120_000);
  let w: WebviewPage;
  let page: Page;
  let seq = 0;
  let chunkSeq = 0;
  const ev = (e: Record<string, unknown>) => ({ seq: ++seq, time: Date.now(), threadId: T, ...e });
  const chunks = (turnId: string, kind: string, ...data: string[]) => ({ type: 'turnChunks', turnId, chunks: data.map((d) => ({ turnId, seq: ++chunkSeq, kind, data: d })) });
  const host = (message: unknown) => w.host(message);
  const eventually = (what: string, check: () => Promise<boolean>) => w.eventually(what, check);
  async function lastPosted(type: string, pred: (m: Record<string, unknown>) => boolean = () => true): Promise<Record<string, unknown>> {
    let hit: Record<string, unknown> | undefined;
    await eventually(`a posted ${type}`, async () => !!(hit = (await w.posted()).filter((m) => m.type === type && pred(m)).at(-1)));
    return hit!;
  }
  /** Serious and critical axe findings of the page as it is now fail the test, listed. */
  async function expectNoViolationsIn(theme: 'dark' | 'light'): Promise<void> {
    await useTheme(page, w.origin, theme);
    const found = await axeViolations(page, w.origin);
    assert.deepEqual(found.map((f) => f.id), [], `${theme} theme:\n${describeFindings(found)}`);
  }
  /** Both themes (Dark Modern and Light Modern stand-ins): contrast comes from the theme's variables. */
  async function expectNoViolations(): Promise<void> {
    await expectNoViolationsIn('dark');
    await expectNoViolationsIn('light');
    await useTheme(page, w.origin, 'dark');
  }

  describe('the chat', () => {
    before(async function () {
      w = await openWebviewPage(this, { nonce: 'nonce-a11y', profilePrefix: 'vox-chromium-a11y-', viewport: { width: 420, height: 900 } });
      page = w.page;
      await host({ type: 'settings', model: 'openai:gpt-4o', models: [{ ref: 'openai:gpt-4o', label: 'GPT-4o', isDemo: false }, { ref: 'demo:vox-demo', label: 'Vox demo', isDemo: true }], demoNotice: null });
      const list = await lastPosted('listThreads');
      await host({ type: 'result', inReplyTo: list.requestId, value: { nextCursor: null, threads: [{ id: T, title: 'Add a greeting', createdAt: 1, updatedAt: Date.now(), lastSeq: 0 }] } });
    });

    after(async () => {
      await w?.close();
    });

    it('a conversation (messages, a plan card, a streaming answer, a tool call waiting for approval) has no serious or critical axe violations', async () => {
      await host({ type: 'hostCommand', command: 'openThread', threadId: T });
      await lastPosted('subscribeThread', (m) => m.threadId === T);
      await host({ type: 'events', threadId: T, events: [
        ev({ type: 'thread.created', title: 'Add a greeting' }),
        ev({ type: 'message.added', messageId: 'm:u1', parentId: null, role: 'user', content: 'Plan a greeting for the README', runId: null, status: 'complete' }),
        ev({ type: 'run.started', runId: R1, ordinal: 0, provider: 'openai', model: 'gpt-4o', ownerPid: 1, userMessageId: 'm:u1' }),
        ev({ type: 'item.started', runId: R1, itemId: 'item:read', ordinal: 0, kind: 'toolCall', toolName: 'read_file', arguments: '{"path":"README.md"}' }),
        ev({ type: 'item.completed', runId: R1, itemId: 'item:read', status: 'completed', content: '# Demo', isError: false }),
        ev({ type: 'plan.submitted', runId: R1, planId: PLAN, title: 'Add a greeting', steps: [{ id: 's1', text: 'Read README.md' }, { id: 's2', text: 'Write hello.txt' }] }),
        ev({ type: 'message.added', messageId: 'm:a1', parentId: 'm:u1', role: 'assistant', content: 'Here is the plan. It has **two** steps:\n\n```ts\nconst hello = "hi";\n```', runId: R1, status: 'complete' }),
        ev({ type: 'run.ended', runId: R1, status: 'completed', error: null, usage: { inputTokens: 10, outputTokens: 20 } }),
        ev({ type: 'message.added', messageId: 'm:u2', parentId: 'm:a1', role: 'user', content: 'Now write it', runId: null, status: 'complete' }),
        ev({ type: 'run.started', runId: R2, ordinal: 1, provider: 'openai', model: 'gpt-4o', ownerPid: 1, userMessageId: 'm:u2' }),
      ] });
      await lastPosted('subscribeTurn', (m) => m.turnId === R2);
      await host(chunks(R2, 'text', 'Writing the file ', 'now.'));
      const args = JSON.stringify({ path: 'hello.txt', content: 'hi\n' });
      await host({ type: 'events', threadId: T, events: [ev({ type: 'item.started', runId: R2, itemId: 'item:write', ordinal: 1, kind: 'toolCall', toolName: 'write_file', arguments: args })] });
      await host({ type: 'approvalRequested', callId: 'item:write', threadId: T, runId: R2, toolName: 'write_file', argumentsJson: args, toolClass: 'write' });
      await page.locator('section.tool[data-call-id="item:write"] vscode-button.approve').waitFor();
      await page.locator(`section.plan[data-plan-id="${PLAN}"]`).waitFor();
      await eventually('the streamed text', async () => (await page.locator('[data-role="assistant"]').last().innerText()).includes('Writing the file now.'));
      await page.locator('.code-block code[data-highlighted="full"]').first().waitFor();
      await expectNoViolations();
      // The thread panel and the find bar open over the same conversation.
      await page.locator('button.threads-toggle').click();
      await page.locator('#vox-thread-panel').waitFor();
      await page.keyboard.press('Control+f');
      await page.locator('.find-bar input').fill('plan');
      await expectNoViolations();
      await page.locator('.find-bar input').press('Escape');
      await page.locator('button.threads-toggle').click();
    });

    it('the composer with chips and the mention popup open has no serious or critical axe violations', async () => {
      const area = page.locator('vscode-textarea textarea');
      await area.focus();
      await area.pressSequentially('explain @ap');
      const ask = await lastPosted('suggestMentions', (m) => m.query === 'ap');
      await host({ type: 'result', inReplyTo: ask.requestId, value: { items: [{ kind: 'file', target: 'src/app.ts', label: 'src/app.ts', detail: 'file' }] } });
      await page.locator('#vox-mention-popup [role="option"]').first().waitFor();
      await area.press('Enter');
      const chip = page.locator('.composer .chip').first();
      await chip.waitFor();
      await area.pressSequentially(' and @sr');
      const ask2 = await lastPosted('suggestMentions', (m) => m.query === 'sr');
      await host({ type: 'result', inReplyTo: ask2.requestId, value: { items: [
        { kind: 'folder', target: 'src', label: 'src/', detail: 'folder' },
        { kind: 'file', target: 'src/app.ts', label: 'src/app.ts', detail: 'file' },
      ] } });
      await eventually('two suggestions', async () => (await page.locator('#vox-mention-popup [role="option"]').count()) === 2);
      await expectNoViolations();
      await area.press('Escape');
      await eventually('Escape closes the popup', async () => (await page.locator('#vox-mention-popup').count()) === 0);
    });

    it('the live region says the streamed text once, in sentences and paragraphs, and the run status; the conversation itself is not live', async () => {
      // The run of the first test ends (its approval answered elsewhere).
      await host({ type: 'approvalSettled', callId: 'item:write', threadId: T, runId: R2, decision: 'denied' });
      await host({ type: 'events', threadId: T, events: [
        ev({ type: 'item.completed', runId: R2, itemId: 'item:write', status: 'denied', content: 'Denied.', isError: true }),
        ev({ type: 'message.added', messageId: 'm:a2', parentId: 'm:u2', role: 'assistant', content: 'Writing the file now.', runId: R2, status: 'complete' }),
        ev({ type: 'run.ended', runId: R2, status: 'completed', error: null, usage: { inputTokens: 1, outputTokens: 1 } }),
      ] });
      await eventually('the run is over', async () => (await page.locator('vscode-button.approve').count()) === 0);
      await page.evaluate(`(() => {
        window.__said = [];
        new MutationObserver((records) => {
          for (const r of records) for (const n of r.addedNodes) if (n.nodeType === 1) window.__said.push(n.textContent.trim());
        }).observe(document.getElementById('vox-announcer'), { childList: true });
      })()`);
      await host({ type: 'events', threadId: T, events: [
        ev({ type: 'message.added', messageId: 'm:u3', parentId: 'm:a2', role: 'user', content: 'Run the tests', runId: null, status: 'complete' }),
        ev({ type: 'run.started', runId: R3, ordinal: 2, provider: 'openai', model: 'gpt-4o', ownerPid: 1, userMessageId: 'm:u3' }),
      ] });
      await lastPosted('subscribeTurn', (m) => m.turnId === R3);
      const answer = page.locator('[data-role="assistant"]').last();
      // Deltas as a model streams them: words, a sentence end inside one, a paragraph break, a code block.
      const deltas = ['I will', ' run the', ' **tests** now.', ' First the', ' unit tests.\n\nThey', ' take a minute', '.\n\n```sh\nnpm', ' test\n```\n', 'Then'];
      let shown = '';
      for (const d of deltas) {
        await host(chunks(R3, 'text', d));
        shown += d;
        const words = shown.replace(/[*`]/g, '').split(/\s+/).filter((x) => /^[a-z]+$/i.test(x)).at(-1)!;
        await eventually(`"${words}" is shown`, async () => (await answer.innerText()).includes(words));
      }
      const args = JSON.stringify({ command: 'npm test' });
      await host({ type: 'events', threadId: T, events: [ev({ type: 'item.started', runId: R3, itemId: 'item:cmd', ordinal: 1, kind: 'toolCall', toolName: 'run_command', arguments: args })] });
      await host({ type: 'approvalRequested', callId: 'item:cmd', threadId: T, runId: R3, toolName: 'run_command', argumentsJson: args, toolClass: 'execute' });
      await page.locator('section.tool[data-call-id="item:cmd"] vscode-button.approve').waitFor();
      await host({ type: 'approvalSettled', callId: 'item:cmd', threadId: T, runId: R3, decision: 'approved' });
      await host(chunks(R3, 'text', 'All tests pass'));
      await eventually('the last text', async () => (await answer.innerText()).includes('All tests pass'));
      await host({ type: 'events', threadId: T, events: [
        ev({ type: 'item.completed', runId: R3, itemId: 'item:cmd', status: 'completed', content: 'ok', isError: false }),
        ev({ type: 'message.added', messageId: 'm:a3', parentId: 'm:u3', role: 'assistant', content: 'done', runId: R3, status: 'complete' }),
        ev({ type: 'run.ended', runId: R3, status: 'completed', error: null, usage: { inputTokens: 1, outputTokens: 1 } }),
      ] });
      await eventually('the end is announced', async () => ((await page.evaluate('window.__said')) as string[]).includes('Vox is done.'));
      assert.deepEqual(await page.evaluate('window.__said'), [
        'Vox is thinking…',
        'I will run the tests now.',
        'First the unit tests.',
        'They take a minute.',
        'Code block (sh).',
        'Then',
        'Vox is waiting for your approval: run_command.',
        'All tests pass',
        'Vox is done.',
      ]);
      assert.equal(await page.locator('#vox-announcer').getAttribute('aria-live'), 'polite');
      const live = await answer.evaluate((el) => el.closest('[aria-live], [role="log"], [role="status"], [role="alert"]')?.outerHTML.slice(0, 120) ?? null);
      assert.equal(live, null, 'the streaming message is inside no live region (it would be read again on every delta)');
    });
  });

  describe('the compare tab', () => {
    before(async function () {
      w = await openWebviewPage(this, { entry: 'compare', nonce: 'nonce-a11y-cmp', profilePrefix: 'vox-chromium-a11y-cmp-', viewport: { width: 900, height: 800 } });
      page = w.page;
    });

    after(async () => {
      await w?.close();
    });

    it('two branches side by side with the diff of their answers have no serious or critical axe violations', async () => {
      await lastPosted('ready');
      const msg = (id: string, parentId: string | null, role: string, content: string) => ({ id, threadId: T, parentId, role, content, runId: null, status: 'complete', createdAt: 1 });
      await host({
        type: 'compare', threadTitle: 'Add a greeting',
        branches: [
          { branchId: 'main', name: 'main', leafId: 'm:a', forkMessageId: null, length: 2, updatedAt: 1, active: true },
          { branchId: 'main-m:u-1', name: 'say-hello', leafId: 'm:b', forkMessageId: 'm:u', length: 2, updatedAt: 2, active: false },
        ],
        data: {
          divergence: { index: 1, messageId: 'm:u' },
          shared: [msg('m:u', null, 'user', 'Say hello')],
          columns: [
            { leafId: 'm:a', branchId: 'main', name: 'main', messages: [msg('m:a', 'm:u', 'assistant', 'Hello **there**.')] },
            { leafId: 'm:b', branchId: 'main-m:u-1', name: 'say-hello', messages: [msg('m:b', 'm:u', 'assistant', 'Hi.\n\n```js\nconsole.log(1)\n```')] },
          ],
          finalDiffs: [{ leafId: 'm:b', against: 'm:a', diff: '--- main\n+++ main-m:u-1\n@@ -1 +1 @@\n-Hello **there**.\n+Hi.\n' }],
        },
      });
      await page.locator('.column').nth(1).waitFor();
      await page.locator('details.shared summary').click();
      await expectNoViolations();
    });
  });
});

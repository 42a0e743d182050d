/**
 * UI end to end of "Connect a model" in a real VS Code (code-server + Chromium, own session with a
 * fresh profile on the sample workspace), against a scripted OpenAI-compatible server on
 * 127.0.0.1 that lists two models at `GET /v1/models` and answers the connection test. Called by
 * test/e2e/run-e2e.mjs (pass 1); each check is one named, counted check there:
 *   1. the chat view shows the demo banner as ONE line with "Connect a model" and a dismiss button;
 *   2. the banner's "Connect a model" opens the flow's provider pick; "Ollama" with a base URL
 *      on a closed port shows the exact failure (Ollama, 127.0.0.1:PORT, refused) with Retry;
 *   2b. "VS Code language models" lists vscode.lm's models, or (code-server has none) says so with Retry;
 *   3. "Vox: Connect a Model…" → "OpenAI-compatible URL…" → the server's base URL → its name → no key → the
 *      models listed from the server's API (both shown; screenshot, the README picture) → one
 *      picked → the connection test (the server gets the tiny request) → "connected" → the
 *      webview's picker shows `compat:fake-local/beta-chat` in a "fake-local (OpenAI-compatible)" group and
 *      settings.json holds the base URL (and no key);
 *   3b. "Vox: Manage Model Endpoints…" lists that endpoint (the model is on it); its row → "Edit URL
 *      and key…" gives it a key (tested, saved, not in settings.json); its row → Rename… →
 *      a taken-looking bad name is refused as it is typed, `lab` accepted → the picker shows
 *      `compat:lab/beta-chat` in a "lab (OpenAI-compatible)" group and settings.json holds `lab`
 *      and the new model, and a turn on the new ref sends the key; then the row's Remove button → the modal confirmation (it says the model
 *      uses it) → Remove → the notification says the model fell back to the demo model, the
 *      picker shows it and settings.json has no endpoint left;
 *   4. back on the demo model (picker), the banner is dismissed; after "Developer: Reload
 *      Window" it stays dismissed (the picker still shows the demo model);
 *   5. screenshots (docs/screenshot-connect.png with --update-screenshot).
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import * as h from './harness';
import { textTurn } from '../support/fake-openai-server';
import { assert, checkScreenshots, readmePicture } from './ui-session';
import { exactly, sendInNewThread, toast, widenSideBar } from './ui-workbench';
import { defineUiSet } from './ui-set';

export const CONNECT_CHECKS = {
  banner: 'connect UI: the demo banner is one line with "Connect a model" and a dismiss button',
  failure: 'connect UI: the banner leads into Connect a Model; Ollama on a closed port shows the exact failure (host:port, refused) with Retry',
  vscodeLm: 'connect UI: "VS Code language models" says clearly that none are available (code-server has none), with Retry',
  connect: 'connect UI: "Vox: Connect a Model…" lists the OpenAI-compatible server\'s models from its API, tests one and uses it (picker grouped by provider)',
  endpoints: 'connect UI: "Vox: Manage Model Endpoints…" gives the endpoint a key (Edit), renames it (picker, settings and key follow) and its Remove button removes it (confirmed; the model falls back to the demo model, said)',
  dismissed: 'connect UI: the dismissed demo banner stays dismissed after "Developer: Reload Window"',
  screenshots: 'connect UI: screenshots in test-results/ and the README picture',
} as const;

const MODELS = ['alpha-coder', 'beta-chat'];
const PICKED = 'beta-chat';
/** The endpoint's name, typed over the default (its host:port). */
const ENDPOINT = 'fake-local';
const REF = `compat:${ENDPOINT}/${PICKED}`;
/** The key given through "Edit URL and key…" (it must move with the name). */
const KEY = 'sk-e2e-endpoint-Vq8Rt3Lm6Xw2';
/** The endpoint's name after "Rename…". */
const RENAMED = 'lab';
const README = readmePicture('screenshot-connect', 250 * 1024);

const widget = (p: Page) => p.locator('.quick-input-widget');

/** Waits for a quick pick row labelled exactly `label`, then picks it by typing the label. */
async function pickRow(p: Page, label: string, choose = true): Promise<void> {
  await widget(p).locator('.quick-input-list .label-name', { hasText: exactly(label) }).first().waitFor({ timeout: 20_000 });
  if (choose) await h.answerQuickInput(p, label);
}

/** Waits for an input box whose prompt contains `prompt`, then answers `text`. */
async function answerInput(p: Page, prompt: string, text: string): Promise<void> {
  await widget(p).locator('.quick-input-message', { hasText: prompt }).first().waitFor({ timeout: 20_000 });
  await h.answerQuickInput(p, text);
}

async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

export const runConnectChecks = defineUiSet({
  name: 'connect UI',
  dir: 'connect',
  checks: CONNECT_CHECKS,
  state: { banner: false, connected: false },
  fake: { responses: [], models: MODELS.map((id) => ({ id })) },
  settings: { 'vox.model': 'local:demo' },
  run: async ({ o, page: p, shots, shot, openWorkbench, sidebar, check, requireState, state, dirs, fake: fk }) => {
    const settingsJson = () => fs.readFileSync(path.join(dirs.userData, 'User', 'settings.json'), 'utf8');

    // ---- 1. One line
    await check(CONNECT_CHECKS.banner, async () => {
      await openWorkbench();
      await h.runCommand(p, 'Vox: Focus on Chat View', 45_000);
      await widenSideBar(p, 520);
      const view = await sidebar();
      const banner = view.locator('.demo-banner');
      await banner.waitFor({ state: 'visible', timeout: 30_000 });
      const box = await banner.boundingBox();
      assert(box && box.height <= 32, `the demo banner is ${box?.height} px high, not one line`);
      await banner.locator('button[data-action="connectModel"]', { hasText: 'Connect a model' }).waitFor({ timeout: 5_000 });
      await banner.locator('button.dismiss').waitFor({ timeout: 5_000 });
      await shot('e2e-connect-banner');
      state.banner = true;
    });

    // ---- 2. The banner's button; a failure named exactly
    await check(CONNECT_CHECKS.failure, async () => {
      requireState('banner');
      const port = await closedPort();
      const view = await sidebar();
      await view.locator('.demo-banner button[data-action="connectModel"]').click({ timeout: 10_000 });
      await pickRow(p, 'OpenAI', false);
      for (const other of ['Anthropic', 'OpenRouter', 'LM Studio', 'OpenAI-compatible URL…', 'GGUF file…', 'VS Code language models']) await pickRow(p, other, false);
      await pickRow(p, 'Ollama');
      await answerInput(p, 'base URL', `http://127.0.0.1:${port}/v1`);
      const t = toast(p, `Ollama at 127.0.0.1:${port} refused the connection (ECONNREFUSED)`);
      await t.waitFor({ state: 'visible', timeout: 30_000 });
      await t.locator('.monaco-button', { hasText: 'Retry' }).first().waitFor({ timeout: 5_000 });
      await shot('e2e-connect-failure');
      await h.runCommand(p, 'Notifications: Clear All Notifications').catch(() => {});
    });

    // ---- 2b. VS Code language models: listed, or a clear "none"
    await check(CONNECT_CHECKS.vscodeLm, async () => {
      requireState('banner');
      await h.runCommand(p, 'Vox: Connect a Model…', 30_000, { opensQuickInput: true });
      await pickRow(p, 'VS Code language models');
      const t = toast(p, 'Vox: no VS Code language models are available');
      await t.waitFor({ state: 'visible', timeout: 20_000 });
      await t.locator('.monaco-button', { hasText: 'Retry' }).first().waitFor({ timeout: 5_000 });
      await h.runCommand(p, 'Notifications: Clear All Notifications').catch(() => {});
    });

    // ---- 3. List from the API, test, use
    await check(CONNECT_CHECKS.connect, async () => {
      requireState('banner');
      const before = fk.requests.length;
      fk.push(textTurn('OK'));
      await h.runCommand(p, 'Vox: Connect a Model…', 30_000, { opensQuickInput: true });
      await pickRow(p, 'OpenAI-compatible URL…');
      await answerInput(p, 'base URL', fk.baseUrl);
      await answerInput(p, 'A name for this endpoint', ENDPOINT);
      await answerInput(p, 'API key', '');
      for (const m of MODELS) await pickRow(p, m, false);
      const title = ((await widget(p).locator('.quick-input-title').textContent()) ?? '').trim();
      assert(title.includes(`models at ${ENDPOINT}`), `the model pick is titled ${JSON.stringify(title)}`);
      await shot(README.shot);
      await shot('e2e-connect-models');
      await h.answerQuickInput(p, PICKED);
      await toast(p, `Vox: connected — now using ${REF}`).waitFor({ state: 'visible', timeout: 30_000 });
      const reqs = fk.requests.slice(before);
      assert(reqs.some((r) => r.method === 'GET' && r.path === '/v1/models'), `no GET /v1/models reached the server (${reqs.map((r) => `${r.method} ${r.path}`).join(', ')})`);
      const test = reqs.find((r) => r.method === 'POST' && r.path === '/v1/chat/completions');
      assert(test?.body?.model === PICKED && test.body.max_tokens === 16, `the connection test sent ${JSON.stringify(test?.body)}`);
      const view = await sidebar();
      await h.waitFor('the picker to show the connected model', 15_000, async () => (await view.locator('.model-row select').inputValue()) === REF);
      const groups = await view.locator('.model-row select optgroup').evaluateAll((els) => els.map((g) => g.getAttribute('label')));
      assert(groups.includes(`${ENDPOINT} (OpenAI-compatible)`), `the picker's groups are ${JSON.stringify(groups)}`);
      await view.locator('.demo-banner').waitFor({ state: 'detached', timeout: 10_000 });
      const settings = JSON.parse(settingsJson()) as Record<string, unknown>;
      const endpoints = settings['vox.compatEndpoints'] as { name: string; baseUrl: string }[] | undefined;
      assert(endpoints?.some((e) => e.name === ENDPOINT && e.baseUrl === fk.baseUrl) && settings['vox.model'] === REF, `settings.json: ${settingsJson()}`);
      await shot('e2e-connect-connected');
      await h.runCommand(p, 'Notifications: Clear All Notifications').catch(() => {});
      state.connected = true;
    });

    // ---- 3b. Rename, then remove, through "Vox: Manage Model Endpoints…"
    await check(CONNECT_CHECKS.endpoints, async () => {
      requireState('connected');
      const row = (name: string) => widget(p).locator('.quick-input-list .monaco-list-row', { has: p.locator('.label-name', { hasText: exactly(name) }) }).first();
      await h.runCommand(p, 'Vox: Manage Model Endpoints…', 30_000, { opensQuickInput: true });
      await row(ENDPOINT).waitFor({ timeout: 20_000 });
      const detail = (await row(ENDPOINT).innerText()).replace(/\s+/g, ' ');
      assert(detail.includes(fk.baseUrl) && detail.includes(`the model ${REF} is on this endpoint`), `the endpoint's row reads ${JSON.stringify(detail)}`);
      await shot('e2e-connect-endpoints');
      // Edit URL and key…: the same URL and name, now with a key (saved after its test passes).
      fk.push(textTurn('OK'));
      await h.answerQuickInput(p, ENDPOINT);
      await pickRow(p, 'Edit URL and key…');
      await answerInput(p, 'base URL', fk.baseUrl);
      await answerInput(p, 'A name for this endpoint', ENDPOINT);
      await answerInput(p, 'API key', KEY);
      await pickRow(p, PICKED);
      await toast(p, `Vox: connected — now using ${REF}`).waitFor({ state: 'visible', timeout: 30_000 });
      assert(!settingsJson().includes(KEY), 'the key is in settings.json');
      // The flow shows the list again: Rename….
      await row(ENDPOINT).waitFor({ timeout: 20_000 });
      await h.answerQuickInput(p, ENDPOINT);
      await pickRow(p, 'Rename…');
      await answerInput(p, 'A new name for this endpoint', 'has space');
      await widget(p).locator('.quick-input-message', { hasText: 'is not an endpoint name' }).first().waitFor({ timeout: 10_000 });
      await h.answerQuickInput(p, RENAMED);
      await toast(p, `Vox: renamed "${ENDPOINT}" to "${RENAMED}"`).waitFor({ state: 'visible', timeout: 20_000 });
      const renamedRef = `compat:${RENAMED}/${PICKED}`;
      const view = await sidebar();
      await h.waitFor('the picker to show the renamed endpoint\'s model', 15_000, async () => (await view.locator('.model-row select').inputValue()) === renamedRef);
      const groups = await view.locator('.model-row select optgroup').evaluateAll((els) => els.map((g) => g.getAttribute('label')));
      assert(groups.includes(`${RENAMED} (OpenAI-compatible)`) && !groups.includes(`${ENDPOINT} (OpenAI-compatible)`), `the picker's groups are ${JSON.stringify(groups)}`);
      let settings = JSON.parse(settingsJson()) as Record<string, unknown>;
      assert(JSON.stringify(settings['vox.compatEndpoints']) === JSON.stringify([{ name: RENAMED, baseUrl: fk.baseUrl }]) && settings['vox.model'] === renamedRef, `settings.json after the rename: ${settingsJson()}`);
      // The flow shows the list again (renamed); closed, the key moved with the name: a turn on the renamed endpoint's model sends it.
      await row(RENAMED).waitFor({ timeout: 20_000 });
      await p.keyboard.press('Escape');
      await widget(p).waitFor({ state: 'hidden', timeout: 10_000 });
      const sent = fk.requests.length;
      fk.push(textTurn('Answered by lab.'));
      await sendInNewThread(view, 'Who answers?');
      await h.waitFor('the renamed endpoint to answer', 30_000, async () => (await view.locator('[data-role="assistant"]').last().innerText().catch(() => '')).includes('Answered by lab.'), 200);
      const auth = fk.requests.slice(sent).find((r) => r.method === 'POST')?.headers.authorization;
      assert(auth === `Bearer ${KEY}`, `the turn after the rename sent ${auth === undefined ? 'no key' : 'another key'}`);
      // The renamed row's Remove button.
      await h.runCommand(p, 'Vox: Manage Model Endpoints…', 30_000, { opensQuickInput: true });
      await row(RENAMED).waitFor({ timeout: 20_000 });
      await row(RENAMED).hover({ timeout: 5_000 });
      await row(RENAMED).locator('.action-label[aria-label^="Remove"], .action-label[title^="Remove"]').first().click({ timeout: 10_000 });
      const dialog = p.locator('.monaco-dialog-box').first();
      await dialog.waitFor({ state: 'visible', timeout: 15_000 });
      const question = (await dialog.innerText()).replace(/\s+/g, ' ');
      assert(question.includes(`Remove the endpoint "${RENAMED}"`) && question.includes(`The model ${renamedRef} uses it`), `the confirmation reads ${JSON.stringify(question)}`);
      await shot('e2e-connect-endpoint-remove');
      await dialog.locator('.monaco-button', { hasText: exactly('Remove') }).first().click({ timeout: 10_000 });
      await toast(p, `Vox: removed "${RENAMED}" and its key. The model ${renamedRef} was on it — now using local:demo.`).waitFor({ state: 'visible', timeout: 20_000 });
      await p.keyboard.press('Escape');
      await h.waitFor('the picker to fall back to the demo model', 15_000, async () => (await view.locator('.model-row select').inputValue()) === 'local:demo');
      settings = JSON.parse(settingsJson()) as Record<string, unknown>;
      assert(JSON.stringify(settings['vox.compatEndpoints'] ?? []) === '[]' && (settings['vox.model'] ?? 'local:demo') === 'local:demo', `settings.json after the removal: ${settingsJson()}`);
      await h.runCommand(p, 'Notifications: Clear All Notifications').catch(() => {});
    });

    // ---- 4. Dismissed stays dismissed
    await check(CONNECT_CHECKS.dismissed, async () => {
      requireState('banner');
      let view = await sidebar();
      if ((await view.locator('.model-row select').inputValue()) !== 'local:demo') await view.locator('.model-row select').selectOption('local:demo', { timeout: 10_000 });
      const banner = view.locator('.demo-banner');
      await banner.waitFor({ state: 'visible', timeout: 15_000 });
      await banner.locator('button.dismiss').click({ timeout: 10_000 });
      await banner.waitFor({ state: 'detached', timeout: 10_000 });
      await p.evaluate('window.__voxBeforeReload = true');
      await h.runCommand(p, 'Developer: Reload Window');
      await h.waitFor('the window to reload', 30_000, async () => (await p.evaluate('window.__voxBeforeReload === undefined').catch(() => false)) === true, 200);
      await h.waitForWorkbench(p);
      await h.runCommand(p, 'Vox: Focus on Chat View', 45_000);
      view = await sidebar();
      await h.waitFor('the reloaded view to show the demo model', 30_000, async () => (await view.locator('.model-row select').inputValue().catch(() => '')) === 'local:demo');
      // The settings (with the kept choice) arrive with the picker: a banner would be there now.
      assert((await view.locator('.demo-banner').count()) === 0, 'the dismissed demo banner is back after the reload');
      await shot('e2e-connect-dismissed-after-reload');
    });

    await o.check(CONNECT_CHECKS.screenshots, async () => {
      checkScreenshots(o, shots, ['e2e-connect-banner', 'e2e-connect-failure', 'e2e-connect-models', 'e2e-connect-connected', 'e2e-connect-endpoints', 'e2e-connect-endpoint-remove', 'e2e-connect-dismissed-after-reload'], README);
    }, p);
  },
});

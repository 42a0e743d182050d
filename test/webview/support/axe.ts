/**
 * axe-core in the browser tests: injects node_modules/axe-core/axe.min.js into the page (served by
 * ./browser.ts from the page's own origin, so the strict CSP stays as it is), runs it over the
 * page or a part of it and returns the violations of the impacts that fail a test (serious and
 * critical), each as one readable line: rule, impact, help and the offending elements.
 */
import type { Page } from 'playwright-core';
import { until } from '../../support/wait';
import { EXPECT_TIMEOUT_MS } from './browser';

/** How often the theme switch's redraw is looked at (ms). */
const POLL_MS = 20;

/** The impacts a test fails on; minor and moderate ones are reported by axe but not gated. */
export const FAILING_IMPACTS: readonly string[] = ['serious', 'critical'];

export interface AxeFinding {
  id: string;
  impact: string;
  help: string;
  targets: string[];
}

interface AxeResult {
  violations: { id: string; impact: string | null; help: string; nodes: { target: unknown[]; failureSummary?: string }[] }[];
}

/** Serious and critical axe violations in `page` (inside `include` when given: a CSS selector). */
export async function axeViolations(page: Page, origin: string, include?: string): Promise<AxeFinding[]> {
  if (!(await page.evaluate('typeof window.axe === "object"'))) {
    // The chat's CSP allows scripts from its origin; the compare tab's only by nonce: give the tag the page's own nonce.
    const nonce = (await page.evaluate('document.querySelector("script[nonce]")?.nonce ?? ""')) as string;
    await page.addScriptTag({ url: `${origin}/axe.min.js` }).catch(async () => {
      await page.evaluate(`new Promise((ok, fail) => { const s = document.createElement('script'); s.nonce = ${JSON.stringify(nonce)}; s.src = ${JSON.stringify(`${origin}/axe.min.js`)}; s.onload = ok; s.onerror = () => fail(new Error('axe.min.js did not load')); document.head.append(s); })`);
    });
  }
  const context = include ? JSON.stringify({ include: [include] }) : 'document';
  const result = (await page.evaluate(`window.axe.run(${context}, { resultTypes: ['violations'] })`)) as AxeResult;
  return result.violations
    .filter((v) => v.impact !== null && FAILING_IMPACTS.includes(v.impact))
    .map((v) => ({ id: v.id, impact: v.impact!, help: v.help, targets: v.nodes.map((n) => `${n.target.map(String).join(' >> ')}${n.failureSummary ? ` (${n.failureSummary.replace(/\s+/g, ' ').trim()})` : ''}`) }));
}

/** The findings as the lines an assertion message shows. */
export function describeFindings(findings: AxeFinding[]): string {
  return findings.map((f) => `${f.impact} ${f.id}: ${f.help}\n    ${f.targets.join('\n    ')}`).join('\n');
}

/** Switches the page's theme stand-in (./page.ts THEME_CSS or LIGHT_THEME_CSS), as VS Code does on a theme change. */
export async function useTheme(page: Page, origin: string, theme: 'dark' | 'light'): Promise<void> {
  const href = `${origin}/${theme === 'light' ? 'theme-light' : 'theme'}.css`;
  await page.evaluate(`new Promise((ok) => {
    const link = document.querySelector('link[href$="/theme.css"], link[href$="/theme-light.css"]');
    document.body.classList.remove('vscode-dark', 'vscode-light');
    document.body.classList.add(${JSON.stringify(`vscode-${theme}`)});
    if (link.href === ${JSON.stringify(href)}) return ok();
    link.onload = ok;
    link.href = ${JSON.stringify(href)};
  })`);
  // Code blocks re-highlight in the new theme's token colours (CodeBlock.svelte marks the theme it drew).
  const redrawn = `[...document.querySelectorAll('.code-block')].every((b) => b.querySelector('code')?.dataset.highlightedTheme === b.dataset.theme)`;
  await until(async () => (await page.evaluate(redrawn)) === true, { what: `code blocks re-highlighted in the ${theme} theme`, timeoutMs: EXPECT_TIMEOUT_MS, everyMs: POLL_MS });
}

/** The words of the spend in the status bar (./usage-status.ts), from a usage report: pure, without VS Code. */
import { formatMicroUsd } from '../../protocol/ledger';
import type { UsageReport } from '../../protocol/commands/ledger';

/** The status bar's text and tooltip for a usage report, or null while there is nothing to show. */
export function usageStatusText(r: Pick<UsageReport, 'todayMicroUsd' | 'totalMicroUsd' | 'balanceMicroUsd' | 'balanceEnforced' | 'byModel'>): { text: string; tooltip: string } | null {
  const unpriced = r.byModel.reduce((n, m) => n + m.unpricedResponses, 0);
  if (!r.balanceEnforced && r.totalMicroUsd === 0 && unpriced === 0) return null;
  const balance = r.balanceEnforced ? ` · ${formatMicroUsd(r.balanceMicroUsd)} left` : '';
  const lines = [
    `Vox spent ${formatMicroUsd(r.todayMicroUsd)} today (${formatMicroUsd(r.totalMicroUsd)} in all).`,
    r.balanceEnforced ? `Balance ${formatMicroUsd(r.balanceMicroUsd)}: a call it cannot cover is refused before it is sent.` : 'No balance granted: nothing is refused for cost (`vox budget grant`).',
    ...(unpriced > 0 ? [`${unpriced} response(s) of models with no price card are not counted (\`vox prices set\`).`] : []),
    'Details: `vox usage`.',
  ];
  return { text: `$(credit-card) ${formatMicroUsd(r.todayMicroUsd)} today${balance}`, tooltip: lines.join('\n') };
}

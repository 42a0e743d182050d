/**
 * What the "Vox: Usage" tab is posted by src/extension/usage/usage-panel.ts, checked with the
 * protocol's own `getUsage` validator before anything renders (a broken message shows an error,
 * never half a page), and the pure shaping of it: the daily series with every day of the period
 * (days without spend are zero, not gaps), the reconciliation of a provider's own figure against
 * the card's, tokens in words. Pure: tested in Node.
 */
import { COMMANDS, type CommandResult } from '../../../src/protocol/commands/index';
import { formatMicroUsd } from '../../../src/protocol/ledger';
import { int, literal, object, str } from '../../../src/protocol/wire/validators';

export type UsageReport = CommandResult<'getUsage'>;

/** The periods the tab offers (days back from today, today included). */
export const USAGE_PERIODS = [7, 30, 90] as const;
export type UsagePeriod = (typeof USAGE_PERIODS)[number];
/** Most days a chart draws (the longest period). */
export const MAX_CHART_DAYS = 90;

export interface UsagePayload {
  type: 'usage';
  /** The machine's local date the report was read on (`YYYY-MM-DD`): "today" of the chart. */
  today: string;
  days: number;
  report: UsageReport;
}

const envelope = object({ type: literal('usage'), today: str, days: int });

/** The payload, or an Error saying what is wrong with it. */
export function decodeUsagePayload(raw: unknown): UsagePayload | Error {
  try {
    const head = envelope(raw);
    if (!/^\d{4}-\d{2}-\d{2}$/.test(head.today)) return new Error(`today is not a date: ${head.today}`);
    if (head.days < 1 || head.days > MAX_CHART_DAYS) return new Error(`a period of ${head.days} days (1..${MAX_CHART_DAYS})`);
    const report = COMMANDS.getUsage.result((raw as { report?: unknown }).report);
    return { ...head, report };
  } catch (e) {
    return e instanceof Error ? e : new Error(String(e));
  }
}

const DAY_MS = 86_400_000;

/** `YYYY-MM-DD` → days since the epoch (UTC arithmetic on a calendar date: no time zone can shift it). */
function dayNumber(day: string): number {
  return Math.round(Date.parse(`${day}T00:00:00Z`) / DAY_MS);
}
function dayString(n: number): string {
  return new Date(n * DAY_MS).toISOString().slice(0, 10);
}

/** The first day of a period of `days` ending `today`. */
export function periodStart(today: string, days: number): string {
  return dayString(dayNumber(today) - (days - 1));
}

export interface DailySeries {
  days: string[];
  /** Seconds since the epoch at each day's start (uPlot's x axis). */
  x: number[];
  /** Micro-dollars spent each day. */
  micro: number[];
  responses: number[];
}

/** Every day of the period, oldest first, zero where nothing was spent. */
export function dailySeries(daily: UsageReport['daily'], today: string, days: number): DailySeries {
  const byDay = new Map(daily.map((d) => [d.day, d]));
  const start = dayNumber(today) - (days - 1);
  const out: DailySeries = { days: [], x: [], micro: [], responses: [] };
  for (let n = start; n <= start + days - 1; n++) {
    const day = dayString(n);
    const d = byDay.get(day);
    out.days.push(day);
    out.x.push((n * DAY_MS) / 1000);
    out.micro.push(d?.costMicroUsd ?? 0);
    out.responses.push(d?.responses ?? 0);
  }
  return out;
}

/** A cost figure in words: exact micro-dollars, `unknown` when nothing of it was priced, `+ N unpriced` when part was. */
export function costText(line: { costMicroUsd: number; responses: number; unpricedResponses: number }): string {
  if (line.responses > 0 && line.unpricedResponses === line.responses) return 'unknown';
  const base = formatMicroUsd(line.costMicroUsd);
  return line.unpricedResponses > 0 ? `${base} + ${line.unpricedResponses} unpriced` : base;
}

/** The reconciliation column: what the provider said it charged against the card's figure for the same responses; null when no provider reported. */
export function reconciliation(line: { providerReportedMicroUsd: number; pricedForReportedMicroUsd: number }): { reported: string; card: string; delta: string; agrees: boolean } | null {
  if (line.providerReportedMicroUsd === 0 && line.pricedForReportedMicroUsd === 0) return null;
  const d = line.providerReportedMicroUsd - line.pricedForReportedMicroUsd;
  return {
    reported: formatMicroUsd(line.providerReportedMicroUsd),
    card: formatMicroUsd(line.pricedForReportedMicroUsd),
    delta: `${d > 0 ? '+' : ''}${formatMicroUsd(d)}`,
    agrees: d === 0,
  };
}

type Tokens = UsageReport['byModel'][number]['tokens'];

/** All tokens of a line (reasoning is part of output, never added). */
export function totalTokens(t: Tokens): number {
  return t.input + t.cacheRead + t.cacheWrite5m + t.cacheWrite1h + t.output;
}

/** Tokens by class, in words (a hover). */
export function tokensInWords(t: Tokens): string {
  const n = (v: number) => v.toLocaleString('en-US');
  const parts = [`${n(t.input)} uncached input`, `${n(t.cacheRead)} cache read`];
  if (t.cacheWrite5m > 0 || t.cacheWrite1h > 0) parts.push(`${n(t.cacheWrite5m)} cache write (5 min)`, `${n(t.cacheWrite1h)} cache write (1 h)`);
  parts.push(`${n(t.output)} output${t.reasoning > 0 ? ` (${n(t.reasoning)} of it reasoning)` : ''}`);
  return parts.join(' · ');
}

/** Compact token count for a table cell: 1234 → 1.2k, 2_500_000 → 2.5M. */
export function shortCount(n: number): string {
  if (n < 1_000) return String(n);
  if (n < 1_000_000) return `${(n / 1_000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(n < 10_000_000 ? 1 : 0)}M`;
}

/** Dollars for an axis label (not for figures: those are exact micro-dollars). */
export function axisDollars(micro: number): string {
  const usd = micro / 1_000_000;
  if (usd === 0) return '$0';
  if (usd < 0.01) return `$${usd.toFixed(4)}`;
  if (usd < 1) return `$${usd.toFixed(2)}`;
  return `$${usd.toFixed(usd < 100 ? 2 : 0)}`;
}

/** Words for a transaction kind. */
export const TRANSACTION_WORDS: Record<UsageReport['transactions'][number]['kind'], string> = {
  purchase: 'Purchase', subscription: 'Subscription', bonus: 'Bonus', refund: 'Refund', usage: 'Usage',
};

/** What the tab asks its host (the extension turns each into protocol calls or a prompt). */
export type UsageRequest =
  | { type: 'ready' }
  | { type: 'refresh'; days: number }
  | { type: 'openThread'; threadId: string }
  | { type: 'grant' }
  | { type: 'setDailyCap' };

/**
 * The cost ledger from a terminal (SPEC 3.4), clients of the ledger commands; money in JSON is
 * integer micro-dollars (`…MicroUsd`), amounts typed are BU (1 BU = $0.001) unless `--usd`:
 *   vox usage [--since DATE] [--thread ID]        balance, today, per model, per thread, transactions
 *   vox budget grant AMOUNT --kind K [--usd] [--note T]
 *   vox budget set [--thread ID] [--thread-cap BU] [--run-cap BU] [--daily-cap BU] [--action warn|block] [--usd]
 *   vox prices set MODEL --input USD --output USD [--cache-read USD] [--cache-write USD] [--cache-write-1h USD]
 *   vox prices show MODEL
 */
import { InvalidArgumentError, type Command } from 'commander';
import type { PriceView, ThreadCostsView, UsageReport } from '../protocol/commands/ledger';
import { formatMicroUsd, MICRO_USD_PER_BU, usdToMicroOrNull } from '../protocol/ledger';
import { withClient } from './connect';
import { print, type Flags } from './output';
import { CliUsageError } from './usage-error';

type Cwd = Flags & { cwd?: string };

function amount(v: string): number {
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || n < 0) throw new InvalidArgumentError(`not an amount: ${JSON.stringify(v)}`);
  return n;
}

const usd = (m: number) => formatMicroUsd(m);

/** An amount typed in BU (or dollars with --usd) as micro-dollars; a usage error when out of range. */
function toMicro(n: number, inUsd: boolean | undefined, cmd: Command): number {
  const micro = usdToMicroOrNull(inUsd ? n : (n * MICRO_USD_PER_BU) / 1_000_000);
  if (micro === null) throw new CliUsageError(`amount out of range: ${n}`, cmd);
  return micro;
}

export function formatUsage(r: UsageReport): string {
  const lines = [
    `balance ${usd(r.balanceMicroUsd)}${r.balanceEnforced ? '' : ' (no grant yet: nothing is refused for the balance)'} · today ${usd(r.todayMicroUsd)} · total ${usd(r.totalMicroUsd)}`,
  ];
  const tokens = (t: UsageReport['byModel'][number]['tokens']) => `${t.input} in, ${t.cacheRead} cache read, ${t.cacheWrite5m + t.cacheWrite1h} cache write, ${t.output} out`;
  if (r.byModel.length > 0) lines.push('', 'per model:', ...r.byModel.map((m) => `  ${m.model}  ${usd(m.costMicroUsd)}  ${m.responses} responses${m.unpricedResponses ? ` (${m.unpricedResponses} unpriced)` : ''}  ${tokens(m.tokens)}`));
  if (r.byThread.length > 0) lines.push('', 'per thread:', ...r.byThread.map((t) => `  ${t.threadId}  ${usd(t.costMicroUsd)}  ${t.responses} responses`));
  if (r.caps.length > 0) lines.push('', 'caps:', ...r.caps.map((c) => `  ${c.scope}${c.threadId ? ` ${c.threadId}` : ''}  ${usd(c.capMicroUsd)}  ${c.action}`));
  if (r.transactions.length > 0) {
    lines.push('', 'transactions (newest first):', ...r.transactions.map((t) => `  ${new Date(t.createdAt).toISOString()}  ${t.kind}  ${t.amountMicroUsd >= 0 ? '+' : ''}${usd(t.amountMicroUsd)}  → ${usd(t.balanceAfterMicroUsd)}${t.model ? `  ${t.model}` : ''}${t.note ? `  ${t.note}` : ''}`));
  }
  return lines.join('\n');
}

/** One thread's cost, run by run (`vox costs`): an unpriced run is unknown, never $0. */
export function formatThreadCosts(c: ThreadCostsView): string {
  if (c.runs.length === 0) return `${c.threadId}: nothing spent`;
  const cost = (x: { costMicroUsd: number; responses: number; unpricedResponses: number }) =>
    x.unpricedResponses === x.responses ? 'unknown' : `${usd(x.costMicroUsd)}${x.unpricedResponses > 0 ? ` + ${x.unpricedResponses} unpriced` : ''}`;
  return [
    `${c.threadId}: ${cost(c)} over ${c.responses} response(s)`,
    ...c.runs.map((r) => `  ${r.runId}  ${cost(r)}  ${r.models.join(', ')}  ${r.tokens.input} in / ${r.tokens.cacheRead} cache read / ${r.tokens.cacheWrite5m + r.tokens.cacheWrite1h} cache write / ${r.tokens.output} out  (${r.sources.join(', ')}${r.cards.length ? `; card ${r.cards.map((k) => `${k.id} ${k.source} ${k.version}`).join(', ')}` : ''})`),
  ].join('\n');
}

export function formatPrice(p: PriceView): string {
  if (!p.card || !p.perMillionUsd) return `${p.model}: no price card (its responses are recorded as unpriced; set one with \`vox prices set\`)`;
  const m = p.perMillionUsd;
  return [
    `${p.model}: card ${p.card.id} (${p.card.source}, ${p.card.version})`,
    `  $ per million tokens: input ${m.input}, output ${m.output}, cache read ${m.cacheRead}, cache write ${m.cacheWrite5m} (1 h: ${m.cacheWrite1h})`,
    ...(p.tierAboveTokens ? [`  a higher rate above ${p.tierAboveTokens} prompt tokens`] : []),
  ].join('\n');
}

export function registerUsageCommands(program: Command, run: (p: Promise<number>) => void): void {
  const open = <T>(o: Cwd, reading: boolean, f: Parameters<typeof withClient<T>>[1]) =>
    withClient<T>({ cwd: o.cwd ?? process.cwd(), autoCheckpoints: false, reading }, f);
  program.command('usage').description('what the models cost: balance, today, per model and thread, the transactions (money in JSON: integer micro-dollars)')
    .option('--since <date>', 'only spending from this day on (YYYY-MM-DD)').option('--thread <id>', 'only this thread')
    .option('--cwd <dir>', 'workspace (default: the current directory)').option('--json', 'print JSON')
    .action((o: Cwd & { since?: string; thread?: string }) => run(open(o, true, async ({ client }) => {
      const r = await client.call('getUsage', { ...(o.since ? { since: o.since } : {}), ...(o.thread ? { threadId: o.thread } : {}) });
      print(o, formatUsage(r), r);
      return 0;
    })));

  program.command('costs').description("what one thread spent, run by run: tokens by class, the cost, where it came from and the price card")
    .argument('<thread>', 'thread id (or a unique prefix)')
    .option('--cwd <dir>', 'workspace (default: the current directory)').option('--json', 'print JSON')
    .action((thread: string, o: Cwd) => run(open(o, true, async ({ client }) => {
      const r = await client.call('getThreadCosts', { threadId: thread });
      print(o, formatThreadCosts(r), r);
      return 0;
    })));

  const budget = program.command('budget').description('the balance and spending caps: grant | set');
  budget.command('grant').description('add to the balance; from then on a call the balance cannot cover is refused before it is sent')
    .argument('<amount>', 'BU (1 BU = $0.001), or dollars with --usd', amount)
    .requiredOption('--kind <kind>', 'purchase | subscription | bonus | refund').option('--usd', 'the amount is in dollars')
    .option('--note <text>', 'a note kept with the transaction')
    .option('--cwd <dir>', 'workspace (default: the current directory)').option('--json', 'print JSON')
    .action((n: number, o: Cwd & { kind: string; usd?: boolean; note?: string }, cmd: Command) => run((async () => {
      if (!['purchase', 'subscription', 'bonus', 'refund'].includes(o.kind)) throw new CliUsageError(`--kind is purchase, subscription, bonus or refund, got ${JSON.stringify(o.kind)}`, cmd);
      const micro = toMicro(n, o.usd, cmd);
      if (micro <= 0) throw new CliUsageError('the amount must be more than zero', cmd);
      return open(o, false, async ({ client }) => {
        const r = await client.call('grantBalance', { kind: o.kind as 'purchase', amountMicroUsd: micro, ...(o.note ? { note: o.note } : {}) });
        print(o, `balance ${usd(r.balanceMicroUsd)}`, r);
        return 0;
      });
    })()));
  budget.command('set').description('set spending caps (BU, or dollars with --usd; 0 removes a cap); --action block refuses a call that would pass one, warn tells at 50/75/90/100 %')
    .option('--thread <id>', 'the thread of --thread-cap').option('--thread-cap <amount>', "the thread's cap", amount)
    .option('--run-cap <amount>', 'the cap of every run', amount).option('--daily-cap <amount>', "today's cap (each day's)", amount)
    .option('--action <action>', 'warn | block (default block)', 'block').option('--usd', 'amounts are in dollars')
    .option('--cwd <dir>', 'workspace (default: the current directory)').option('--json', 'print JSON')
    .action((o: Cwd & { thread?: string; threadCap?: number; runCap?: number; dailyCap?: number; action: string; usd?: boolean }, cmd: Command) => run((async () => {
      if (o.action !== 'warn' && o.action !== 'block') throw new CliUsageError(`--action is warn or block, got ${JSON.stringify(o.action)}`, cmd);
      if (o.threadCap !== undefined && !o.thread) throw new CliUsageError('--thread-cap needs --thread', cmd);
      const sets = ([['thread', o.threadCap], ['run', o.runCap], ['daily', o.dailyCap]] as const).filter(([, v]) => v !== undefined);
      if (sets.length === 0) throw new CliUsageError('give --thread-cap, --run-cap or --daily-cap', cmd);
      const action = o.action;
      return open(o, false, async ({ client }) => {
        let caps: unknown = null;
        for (const [scope, v] of sets) {
          const micro = toMicro(v!, o.usd, cmd);
          caps = (await client.call('setBudget', { scope, capMicroUsd: micro === 0 ? null : micro, action, ...(scope === 'thread' ? { threadId: o.thread! } : {}) })).caps;
        }
        const list = caps as UsageReport['caps'];
        print(o, list.length === 0 ? 'no caps' : list.map((c) => `${c.scope}${c.threadId ? ` ${c.threadId}` : ''}  ${usd(c.capMicroUsd)}  ${c.action}`).join('\n'), { caps: list });
        return 0;
      });
    })()));

  const prices = program.command('prices').description('price cards: set | show');
  prices.command('set').description('your price for a model, dollars per million tokens (wins over the bundled card)').argument('<model>')
    .requiredOption('--input <usd>', 'uncached input', amount).requiredOption('--output <usd>', 'output', amount)
    .option('--cache-read <usd>', 'cache reads (default: input)', amount).option('--cache-write <usd>', 'cache writes, 5 minutes (default: input)', amount)
    .option('--cache-write-1h <usd>', 'cache writes, 1 hour (default: the 5-minute price)', amount)
    .option('--cwd <dir>', 'workspace (default: the current directory)').option('--json', 'print JSON')
    .action((model: string, o: Cwd & { input: number; output: number; cacheRead?: number; cacheWrite?: number; cacheWrite1h?: number }) => run(open(o, false, async ({ client }) => {
      const p = await client.call('setPrice', {
        model, input: o.input, output: o.output,
        ...(o.cacheRead !== undefined ? { cacheRead: o.cacheRead } : {}), ...(o.cacheWrite !== undefined ? { cacheWrite: o.cacheWrite } : {}),
        ...(o.cacheWrite1h !== undefined ? { cacheWrite1h: o.cacheWrite1h } : {}),
      });
      print(o, formatPrice(p), p);
      return 0;
    })));
  prices.command('show').description('the price card that prices a model, its source and rates').argument('<model>')
    .option('--cwd <dir>', 'workspace (default: the current directory)').option('--json', 'print JSON')
    .action((model: string, o: Cwd) => run(open(o, true, async ({ client }) => {
      const p = await client.call('getPrice', { model });
      print(o, formatPrice(p), p);
      return 0;
    })));
}

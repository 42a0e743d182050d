/**
 * `vox variants run "prompt" --model A --model B`: runs the prompt as 1..4 variants, each in its
 * own worktree, waits for them (printing status changes), shows their diff stats, and then adopts
 * one (`--adopt N`), discards them all (`--discard`), or leaves the worktrees for inspection
 * (they show in `vox worktree list`). Adoption needs the pool, which lives in this process, so it
 * is decided here rather than by a later command.
 */
import type { Command } from 'commander';
import type { VariantPoolView } from '../protocol/commands/variants';
import { withClient } from './connect';
import { print, type Flags } from './output';
import { yesAnswer } from './permission-commands';
import { CliUsageError } from './usage-error';

type VFlags = Flags & { model: string[]; cwd?: string; adopt?: string; discard?: boolean; thread?: string; yes?: boolean };
const SETTLED = new Set(['completed', 'failed', 'cancelled', 'adopted', 'discarded']);

function describePool(p: VariantPoolView): string {
  return p.variants
    .map((v) => `#${v.index} ${v.model}\t${v.status}\t${v.stats.files.length} file(s) +${v.stats.additions} −${v.stats.deletions}${v.error ? `\t${v.error}` : ''}\t${v.worktreePath}`)
    .join('\n');
}

export function registerVariantCommands(program: Command, run: (p: Promise<number>) => void): void {
  const v = program.command('variants').description('one prompt as 1..4 variants in worktrees (SPEC 4.3)');
  v.command('run')
    .description('run the prompt once per --model, each in its own worktree, and wait for all of them')
    .argument('<prompt...>')
    .option('--model <ref>', 'a model ref; repeat for each variant', (x: string, acc: string[]) => [...acc, x], [] as string[])
    .option('--adopt <index>', 'apply this variant to the workspace when all have finished (the others are removed)')
    .option('--discard', 'remove every variant worktree when all have finished')
    .option('--thread <id>', 'the thread the variants branch from')
    .option('--yes', 'approve every tool call of the variants')
    .option('--cwd <dir>', 'workspace (default: the current directory)')
    .option('--json', 'print JSON')
    .action((words: string[], o: VFlags, cmd: Command) =>
      run(
        withClient({ cwd: o.cwd ?? process.cwd() }, async ({ client }) => {
          if (o.adopt !== undefined && !/^\d+$/.test(o.adopt)) throw new CliUsageError(`--adopt takes a variant index, got ${o.adopt}`, cmd);
          if (o.adopt !== undefined && o.discard) throw new CliUsageError('--adopt and --discard exclude each other', cmd);
          let pool = await client.call('startVariants', { prompt: words.join(' '), models: o.model, ...(o.thread ? { parentThreadId: o.thread } : {}) });
          const poolId = pool.poolId;
          const threads = new Set(pool.variants.map((x) => x.threadId));
          client.on('approvalRequested', (req) => {
            if (!threads.has(req.threadId)) return;
            const yes = o.yes ? yesAnswer(req) : null;
            process.stderr.write(yes ? yes.note ?? '' : `[vox] denied ${req.toolName} in ${req.threadId} (pass --yes to allow)\n`);
            void client.call('respondToApproval', { callId: req.callId, decision: yes?.decision ?? 'denied' }).catch(() => undefined);
          });
          const done = new Promise<VariantPoolView>((resolve) => {
            const seen = new Map<number, string>();
            client.on('variants', (u) => {
              const p = u.pools.find((x) => x.poolId === poolId);
              if (!p) return;
              for (const x of p.variants) {
                if (!o.json && seen.get(x.index) !== x.status) process.stderr.write(`[vox] variant #${x.index} (${x.model}): ${x.status}\n`);
                seen.set(x.index, x.status);
              }
              if (p.variants.every((x) => SETTLED.has(x.status))) resolve(p);
            });
          });
          await client.call('watchVariants', {});
          pool = await done;
          if (o.adopt !== undefined) {
            const r = await client.call('adoptVariant', { poolId, index: Number(o.adopt) });
            print(o, `${describePool(pool)}\nadopted #${r.index}: ${r.files.length} file(s) written`, { pool, adopted: r });
          } else if (o.discard) {
            for (const x of pool.variants) await client.call('discardVariant', { poolId, index: x.index });
            print(o, `${describePool(pool)}\ndiscarded every variant`, { pool, discarded: true });
          } else {
            print(o, `${describePool(pool)}\nthe worktrees stay (vox worktree list); adopt one with --adopt N on the next run, or apply its diff by hand`, { pool });
          }
          return pool.variants.some((x) => x.status === 'completed') ? 0 : 1;
        }),
      ),
    );
}

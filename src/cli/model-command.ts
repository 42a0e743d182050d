/**
 * `vox model …`: where the local models live and how to get a real one. These work on files and
 * the network only (no engine, no database), so they are not protocol commands.
 *   vox model path                 prints the demo model path and whether it exists
 *   vox model list                 recommended GGUF models for machines that are online
 *   vox model download [N|URL] [--dest DIR]
 *                                  downloads recommended model N (default 1) or a URL, with progress
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { demoModelPath, DEMO_MODEL_NOTICE } from '../engine/model/demo-model';
import { downloadModel, RECOMMENDED_MODELS } from '../engine/model/download';
import type { Command } from 'commander';
import { print } from './output';
import { CliUsageError } from './usage-error';

/** Minimum interval between progress lines on a non-terminal stderr (ms). */
const PROGRESS_LINE_INTERVAL_MS = 2_000;

function mb(n: number): string {
  return `${(n / 1_048_576).toFixed(1)} MB`;
}

export async function runModelCommand(sub: string, which: string | undefined, flags: { dest?: string; json?: boolean }, root: string, cmd: Command | string = 'vox model'): Promise<number> {
  if (sub === 'path') {
    const p = demoModelPath(root);
    const exists = fs.existsSync(p);
    print(flags, `${p}${exists ? '' : ' (missing: run `npm run model`)'}\n${DEMO_MODEL_NOTICE}`, { path: p, exists, notice: DEMO_MODEL_NOTICE });
    return 0;
  }
  if (sub === 'list') {
    print(flags, RECOMMENDED_MODELS.map((m, i) => `${i + 1}. ${m.name} (~${mb(m.approxBytes)}): ${m.description}\n   ${m.url}`).join('\n'), RECOMMENDED_MODELS);
    return 0;
  }
  if (sub === 'download') {
    const pick = which ?? '1';
    const url = /^https?:\/\//.test(pick) ? pick : RECOMMENDED_MODELS[Number(pick) - 1]?.url;
    if (!url) throw new CliUsageError(`no recommended model ${pick}; see \`vox model list\``, cmd);
    const destDir = String(flags.dest ?? path.dirname(demoModelPath(root)));
    const destPath = path.join(destDir, decodeURIComponent(new URL(url).pathname.split('/').pop() || 'model.gguf'));
    const ac = new AbortController();
    process.once('SIGINT', () => ac.abort());
    let lastLine = 0;
    const tty = process.stderr.isTTY;
    const result = await downloadModel({
      url, destPath, signal: ac.signal,
      onProgress: (got, total) => {
        const now = Date.now();
        if (!tty && now - lastLine < PROGRESS_LINE_INTERVAL_MS) return;
        lastLine = now;
        const pct = total ? ` ${((got / total) * 100).toFixed(1)}%` : '';
        process.stderr.write(`${tty ? '\r' : ''}downloading ${mb(got)}${total ? ` of ${mb(total)}` : ''}${pct}${tty ? '' : '\n'}`);
      },
    });
    print(flags, `\nsaved ${result.path} (${mb(result.bytes)}, sha256 ${result.sha256})\nuse it with: vox chat --model local:${destPath} "…"`, result);
    return 0;
  }
  throw new CliUsageError('vox model needs path, list or download', cmd);
}

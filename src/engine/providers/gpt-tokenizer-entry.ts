/**
 * The gpt-tokenizer encodings Vox counts OpenAI-family prompts with, as one module that esbuild
 * bundles on its own (dist/tokenizer.js, esbuild.mjs): their BPE ranks are about 3.6 MB, too big
 * for dist/extension.js, and they are loaded only when a count is first asked for
 * (./token-count.ts loads this file by path, so no bundle pulls it in).
 */
import { countTokens as countO200k } from 'gpt-tokenizer/encoding/o200k_base';
import { countTokens as countCl100k } from 'gpt-tokenizer/encoding/cl100k_base';

export const encodings: Record<'o200k_base' | 'cl100k_base', (text: string) => number> = {
  o200k_base: (text) => countO200k(text),
  cl100k_base: (text) => countCl100k(text),
};

/**
 * scripts/make-demo-model.mjs: deterministic output, idempotent reruns, and a file that
 * node-llama-cpp's own GGUF reader parses with the metadata and tensor layout we intended.
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const SCRIPT = path.resolve(__dirname, '../../scripts/make-demo-model.mjs');
/** The spec's target: "a few MB". */
const MAX_MODEL_BYTES = 8_000_000;
/** `<unk>`, `<s>`, `</s>`, 256 byte tokens, 2 ChatML tokens, `▁` and printable ASCII. */
const EXPECTED_VOCAB = 3 + 256 + 2 + 1 + 94;

const sha256 = (p: string): string => createHash('sha256').update(fs.readFileSync(p)).digest('hex');
const generate = (out: string): string => execFileSync(process.execPath, [SCRIPT, out], { encoding: 'utf8' });

describe('demo model generator', function () {
  this.timeout(20_000);
  let dir: string;
  let a: string;

  before(function () {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vox-gguf-'));
    a = path.join(dir, 'a', 'vox-demo.gguf');
    generate(a);
  });

  after(function () {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('writes byte-identical files on separate runs', function () {
    const b = path.join(dir, 'b.gguf');
    generate(b);
    assert.equal(sha256(a), sha256(b));
    const size = fs.statSync(a).size;
    assert.ok(size > 1_000_000 && size < MAX_MODEL_BYTES, `size ${size}`);
  });

  it('leaves an up-to-date file alone and repairs a modified one', function () {
    const before = fs.statSync(a).mtimeMs;
    assert.match(generate(a), /^up to date/);
    assert.equal(fs.statSync(a).mtimeMs, before);
    const good = sha256(a);
    fs.appendFileSync(a, 'junk');
    assert.match(generate(a), /^wrote/);
    assert.equal(sha256(a), good);
  });

  it('is read by node-llama-cpp with the intended metadata and tensors', async function () {
    const { readGgufFileInfo } = await import('node-llama-cpp');
    const info = await readGgufFileInfo(a);
    assert.equal(info.version, 3);
    const md = info.metadata as unknown as Record<string, Record<string, unknown>>;
    assert.equal(md.general!.architecture, 'llama');
    assert.equal(md.general!.name, 'Vox demo (bigram, writes nonsense)');
    assert.equal(md.general!.alignment, 32);
    const tokenizer = md.tokenizer as { chat_template: string; ggml: { tokens: string[]; token_type: number[]; model: string } };
    assert.match(tokenizer.chat_template, /<\|im_start\|>/);
    assert.match(tokenizer.chat_template, /add_generation_prompt/);
    assert.equal(tokenizer.ggml.model, 'llama');
    assert.equal(tokenizer.ggml.tokens.length, EXPECTED_VOCAB);
    assert.equal(tokenizer.ggml.token_type.length, EXPECTED_VOCAB);
    assert.equal(tokenizer.ggml.tokens[3], '<0x00>');
    assert.equal(tokenizer.ggml.tokens[258], '<0xFF>');
    const llama = md.llama as Record<string, unknown>;
    assert.equal(llama.block_count, 1);
    assert.equal(llama.vocab_size, EXPECTED_VOCAB);

    const tensors = info.fullTensorInfo ?? info.tensorInfo ?? [];
    const names = tensors.map((t) => t.name);
    for (const n of ['token_embd.weight', 'output_norm.weight', 'output.weight', 'blk.0.attn_q.weight', 'blk.0.ffn_down.weight']) {
      assert.ok(names.includes(n), `missing tensor ${n}`);
    }
    const size = fs.statSync(a).size;
    for (const t of tensors) {
      assert.equal(Number(t.fileOffset) % 32, 0, `${t.name} is not 32-byte aligned`);
      const bytes = t.dimensions.reduce<number>((n, d) => n * Number(d), 4);
      assert.ok(Number(t.fileOffset) + bytes <= size, `${t.name} runs past the end of the file`);
    }
    const embd = tensors.find((t) => t.name === 'token_embd.weight')!;
    assert.deepEqual(embd.dimensions.map(Number), [Number(llama.embedding_length), EXPECTED_VOCAB]);
  });
});

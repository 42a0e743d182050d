#!/usr/bin/env node
/**
 * Generates Vox's offline demo model: a tiny, deterministic GGUF file that llama.cpp (via
 * node-llama-cpp) loads like any llama-architecture model. It is a character bigram model
 * disguised as a one-layer transformer:
 *   - vocabulary: SentencePiece-style (`<unk>`, `<s>`, `</s>`, 256 byte tokens `<0xNN>`, the ChatML
 *     control tokens, `▁` for space and the printable ASCII characters);
 *   - token embeddings are one-hot, all attention/FFN weights are zero, so the residual stream
 *     leaving the layer is exactly the one-hot vector of the current token;
 *   - output_norm = 1/sqrt(n_embd) undoes RMSNorm's scaling of a one-hot vector, so the logits are
 *     the current token's column of `output.weight`, which holds log P(next | current) counted
 *     from scripts/demo-corpus.txt.
 * It writes nonsense on purpose; it exists so the product works offline out of the box.
 *
 * Usage: node scripts/make-demo-model.mjs [outPath]   (default: models/vox-demo.gguf)
 * Same corpus → byte-identical file. If the target already has the right bytes it is left alone.
 * Plain Node ESM, no dependencies, runs before any build.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const SCRIPT_DIR = dirname(fileURLToPath(import.meta.url));
const DEFAULT_OUT = join(SCRIPT_DIR, '..', 'models', 'vox-demo.gguf');
const CORPUS_PATH = join(SCRIPT_DIR, 'demo-corpus.txt');

// ---- Format constants (GGUF v3, see ggml/docs/gguf.md) ----
const GGUF_MAGIC = 'GGUF';
const GGUF_VERSION = 3;
/** Tensor data alignment in bytes; also written as `general.alignment`. */
const ALIGNMENT = 32;
const T = { U8: 0, I8: 1, U16: 2, I16: 3, U32: 4, I32: 5, F32: 6, BOOL: 7, STRING: 8, ARRAY: 9, U64: 10, I64: 11, F64: 12 };
/** ggml tensor type id of F32. */
const GGML_TYPE_F32 = 0;
/** llama.cpp token types. */
const TOKEN_TYPE = { NORMAL: 1, UNKNOWN: 2, CONTROL: 3, BYTE: 6 };
/** Id of `<0x00>`: byte tokens follow `<unk>`, `<s>`, `</s>`. */
const BYTE_TOKEN_BASE = 3;

// ---- Model shape constants ----
/** Context length advertised to llama.cpp (the bigram itself has no memory). */
const CONTEXT_LENGTH = 4096;
/** Attention head size; n_embd is the vocabulary size rounded up to a multiple of this. */
const HEAD_DIM = 64;
/** One KV head (grouped-query attention) keeps the zero K/V matrices small. */
const HEAD_COUNT_KV = 1;
/** Feed-forward width; the FFN weights are all zero so only its size matters. */
const FEED_FORWARD_LENGTH = 64;
const RMS_EPSILON = 1e-6;
const ROPE_FREQ_BASE = 10000;
/**
 * Written as `vox.grammar.max_length`: a bigram cannot decide to close a JSON string, so under
 * the local provider's tool grammar every string (and array) of this model is capped at this size.
 */
const GRAMMAR_MAX_LENGTH = 48;
/**
 * Written as `vox.chat_wrapper`: node-llama-cpp's name for the chat format of CHAT_TEMPLATE, so
 * the local provider can skip auto-detection (which renders the template ~50 times, ~1 s).
 */
const CHAT_WRAPPER = 'chatML';
/** Additive smoothing for transitions between characters seen in the corpus. */
const SMOOTHING_ALPHA = 0.01;
/** Logit for tokens never seen in the corpus (control, byte, unused): effectively never sampled. */
const FLOOR_LOGIT = -40;

const SPACE_PIECE = '\u2581'; // SentencePiece's "▁"
const IM_START = '<|im_start|>';
const IM_END = '<|im_end|>';
const CHAT_TEMPLATE =
  "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";
const MODEL_NAME = 'Vox demo (bigram, writes nonsense)';

/** Builds the vocabulary: pieces, types and a lookup from piece to id. */
function buildVocab() {
  const pieces = ['<unk>', '<s>', '</s>'];
  const types = [TOKEN_TYPE.UNKNOWN, TOKEN_TYPE.CONTROL, TOKEN_TYPE.CONTROL];
  for (let b = 0; b < 256; b++) {
    pieces.push(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`);
    types.push(TOKEN_TYPE.BYTE);
  }
  pieces.push(IM_START, IM_END);
  types.push(TOKEN_TYPE.CONTROL, TOKEN_TYPE.CONTROL);
  pieces.push(SPACE_PIECE);
  types.push(TOKEN_TYPE.NORMAL);
  for (let c = 0x21; c <= 0x7e; c++) {
    pieces.push(String.fromCharCode(c));
    types.push(TOKEN_TYPE.NORMAL);
  }
  const ids = new Map(pieces.map((p, i) => [p, i]));
  return { pieces, types, ids };
}

/** Tokenises text the way llama.cpp's SPM tokenizer does for this vocabulary (no merges exist). */
function tokenize(text, ids) {
  const out = [];
  for (const ch of text) {
    const piece = ch === ' ' ? SPACE_PIECE : ch;
    const id = ids.get(piece);
    // Only single characters can match here (control and byte pieces are longer); anything
    // outside the character set falls back to its UTF-8 bytes, as SentencePiece does.
    if (id !== undefined) out.push(id);
    else for (const byte of Buffer.from(ch, 'utf8')) out.push(BYTE_TOKEN_BASE + byte);
  }
  return out;
}

/** Counts bigrams: each paragraph is one assistant turn, started by "\n" and ended by <|im_end|>. */
function countBigrams(corpus, vocab) {
  const n = vocab.pieces.length;
  const counts = new Float64Array(n * n); // counts[cur * n + next]
  const newline = vocab.ids.get('<0x0A>');
  const imEnd = vocab.ids.get(IM_END);
  const paragraphs = corpus.split(/\n\s*\n/).map((p) => p.replace(/\s+/g, ' ').trim()).filter(Boolean);
  for (const p of paragraphs) {
    const seq = [newline, ...tokenize(p, vocab.ids), imEnd];
    for (let i = 0; i + 1 < seq.length; i++) counts[seq[i] * n + seq[i + 1]] += 1;
  }
  return { counts, paragraphs: paragraphs.length };
}

/** log P(next | current) as a [n_vocab rows of next][n_embd columns of current] F32 matrix. */
function buildOutputMatrix(counts, nVocab, nEmbd) {
  const seen = new Uint8Array(nVocab);
  const unigram = new Float64Array(nVocab);
  for (let cur = 0; cur < nVocab; cur++) {
    for (let next = 0; next < nVocab; next++) {
      const c = counts[cur * nVocab + next];
      if (c > 0) { seen[next] = 1; unigram[next] += c; }
    }
  }
  const seenCount = seen.reduce((a, b) => a + b, 0);
  const unigramTotal = unigram.reduce((a, b) => a + b, 0);
  const out = new Float32Array(nVocab * nEmbd);
  for (let cur = 0; cur < nVocab; cur++) {
    let total = 0;
    for (let next = 0; next < nVocab; next++) total += counts[cur * nVocab + next];
    for (let next = 0; next < nVocab; next++) {
      let logit = FLOOR_LOGIT;
      if (seen[next]) {
        logit = total > 0
          ? Math.log((counts[cur * nVocab + next] + SMOOTHING_ALPHA) / (total + SMOOTHING_ALPHA * seenCount))
          : Math.log(unigram[next] / unigramTotal); // unseen context: fall back to the unigram
      }
      out[next * nEmbd + cur] = logit;
    }
  }
  return out;
}

/** Little binary writer for GGUF's little-endian primitives. */
class Writer {
  constructor() { this.chunks = []; this.length = 0; }
  push(buf) { this.chunks.push(buf); this.length += buf.length; }
  u32(v) { const b = Buffer.alloc(4); b.writeUInt32LE(v); this.push(b); }
  i32(v) { const b = Buffer.alloc(4); b.writeInt32LE(v); this.push(b); }
  u64(v) { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(v)); this.push(b); }
  f32(v) { const b = Buffer.alloc(4); b.writeFloatLE(v); this.push(b); }
  bool(v) { this.push(Buffer.from([v ? 1 : 0])); }
  str(s) { const b = Buffer.from(s, 'utf8'); this.u64(b.length); this.push(b); }
  pad(alignment) { const r = this.length % alignment; if (r) this.push(Buffer.alloc(alignment - r)); }
  toBuffer() { return Buffer.concat(this.chunks, this.length); }
}

/** Writes one metadata value of GGUF type `type` (arrays: `[elemType, values]`). */
function writeValue(w, type, value) {
  switch (type) {
    case T.U32: return w.u32(value);
    case T.I32: return w.i32(value);
    case T.F32: return w.f32(value);
    case T.BOOL: return w.bool(value);
    case T.STRING: return w.str(value);
    case T.ARRAY: {
      const [elemType, values] = value;
      w.u32(elemType);
      w.u64(values.length);
      for (const v of values) writeValue(w, elemType, v);
      return;
    }
    default: throw new Error(`unsupported GGUF value type ${type}`);
  }
}

/** Builds the complete GGUF file in memory. */
export function buildDemoModel(corpus) {
  const vocab = buildVocab();
  const nVocab = vocab.pieces.length;
  const nEmbd = Math.ceil(nVocab / HEAD_DIM) * HEAD_DIM;
  const headCount = nEmbd / HEAD_DIM;
  const nEmbdKv = HEAD_COUNT_KV * HEAD_DIM;
  const { counts, paragraphs } = countBigrams(corpus, vocab);

  const embeddings = new Float32Array(nVocab * nEmbd);
  for (let t = 0; t < nVocab; t++) embeddings[t * nEmbd + t] = 1; // one-hot
  const ones = new Float32Array(nEmbd).fill(1);
  const zeros = (count) => new Float32Array(count);
  // Dimensions are ggml `ne` order: innermost (row length) first.
  const tensors = [
    ['token_embd.weight', [nEmbd, nVocab], embeddings],
    ['output_norm.weight', [nEmbd], new Float32Array(nEmbd).fill(1 / Math.sqrt(nEmbd))],
    ['output.weight', [nEmbd, nVocab], buildOutputMatrix(counts, nVocab, nEmbd)],
    ['blk.0.attn_norm.weight', [nEmbd], ones],
    ['blk.0.attn_q.weight', [nEmbd, nEmbd], zeros(nEmbd * nEmbd)],
    ['blk.0.attn_k.weight', [nEmbd, nEmbdKv], zeros(nEmbd * nEmbdKv)],
    ['blk.0.attn_v.weight', [nEmbd, nEmbdKv], zeros(nEmbd * nEmbdKv)],
    ['blk.0.attn_output.weight', [nEmbd, nEmbd], zeros(nEmbd * nEmbd)],
    ['blk.0.ffn_norm.weight', [nEmbd], ones],
    ['blk.0.ffn_gate.weight', [nEmbd, FEED_FORWARD_LENGTH], zeros(nEmbd * FEED_FORWARD_LENGTH)],
    ['blk.0.ffn_up.weight', [nEmbd, FEED_FORWARD_LENGTH], zeros(nEmbd * FEED_FORWARD_LENGTH)],
    ['blk.0.ffn_down.weight', [FEED_FORWARD_LENGTH, nEmbd], zeros(nEmbd * FEED_FORWARD_LENGTH)],
  ];

  const metadata = [
    ['general.architecture', T.STRING, 'llama'],
    ['general.name', T.STRING, MODEL_NAME],
    ['general.description', T.STRING,
      `Character bigram model generated by Vox from ${paragraphs} paragraphs of demo text. It writes nonsense.`],
    ['general.alignment', T.U32, ALIGNMENT],
    ['general.file_type', T.U32, 0], // all F32
    ['vox.demo.corpus_sha256', T.STRING, createHash('sha256').update(corpus).digest('hex')],
    ['vox.grammar.max_length', T.U32, GRAMMAR_MAX_LENGTH],
    ['vox.chat_wrapper', T.STRING, CHAT_WRAPPER],
    ['llama.context_length', T.U32, CONTEXT_LENGTH],
    ['llama.embedding_length', T.U32, nEmbd],
    ['llama.block_count', T.U32, 1],
    ['llama.feed_forward_length', T.U32, FEED_FORWARD_LENGTH],
    ['llama.attention.head_count', T.U32, headCount],
    ['llama.attention.head_count_kv', T.U32, HEAD_COUNT_KV],
    ['llama.attention.layer_norm_rms_epsilon', T.F32, RMS_EPSILON],
    ['llama.rope.dimension_count', T.U32, HEAD_DIM],
    ['llama.rope.freq_base', T.F32, ROPE_FREQ_BASE],
    ['llama.vocab_size', T.U32, nVocab],
    ['tokenizer.ggml.model', T.STRING, 'llama'],
    ['tokenizer.ggml.tokens', T.ARRAY, [T.STRING, vocab.pieces]],
    ['tokenizer.ggml.scores', T.ARRAY, [T.F32, vocab.pieces.map(() => 0)]],
    ['tokenizer.ggml.token_type', T.ARRAY, [T.I32, vocab.types]],
    ['tokenizer.ggml.unknown_token_id', T.U32, 0],
    ['tokenizer.ggml.bos_token_id', T.U32, 1],
    ['tokenizer.ggml.eos_token_id', T.U32, vocab.ids.get(IM_END)],
    ['tokenizer.ggml.padding_token_id', T.U32, 2],
    ['tokenizer.ggml.add_bos_token', T.BOOL, false],
    ['tokenizer.ggml.add_eos_token', T.BOOL, false],
    ['tokenizer.ggml.add_space_prefix', T.BOOL, false],
    ['tokenizer.chat_template', T.STRING, CHAT_TEMPLATE],
  ];

  const w = new Writer();
  w.push(Buffer.from(GGUF_MAGIC, 'ascii'));
  w.u32(GGUF_VERSION);
  w.u64(tensors.length);
  w.u64(metadata.length);
  for (const [key, type, value] of metadata) {
    w.str(key);
    w.u32(type);
    writeValue(w, type, value);
  }
  let offset = 0;
  for (const [name, dims, data] of tensors) {
    w.str(name);
    w.u32(dims.length);
    for (const d of dims) w.u64(d);
    w.u32(GGML_TYPE_F32);
    w.u64(offset);
    offset += Math.ceil(data.byteLength / ALIGNMENT) * ALIGNMENT;
  }
  w.pad(ALIGNMENT);
  for (const [, , data] of tensors) {
    w.push(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
    w.pad(ALIGNMENT);
  }
  return { bytes: w.toBuffer(), nVocab, nEmbd };
}

const sha256 = (buf) => createHash('sha256').update(buf).digest('hex');

/** Writes the demo model to `outPath` unless an identical file is already there. */
export function writeDemoModel(outPath = DEFAULT_OUT) {
  const target = resolve(outPath);
  const { bytes, nVocab, nEmbd } = buildDemoModel(readFileSync(CORPUS_PATH, 'utf8'));
  const hash = sha256(bytes);
  if (existsSync(target) && sha256(readFileSync(target)) === hash) {
    return { path: target, bytes: bytes.length, sha256: hash, nVocab, nEmbd, written: false };
  }
  mkdirSync(dirname(target), { recursive: true });
  const tmp = `${target}.${process.pid}.tmp`;
  writeFileSync(tmp, bytes);
  renameSync(tmp, target); // atomic: readers never see a half-written model
  return { path: target, bytes: bytes.length, sha256: hash, nVocab, nEmbd, written: true };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const r = writeDemoModel(process.argv[2]);
  console.log(
    `${r.written ? 'wrote' : 'up to date'} ${r.path} (${(r.bytes / 1e6).toFixed(2)} MB, vocab ${r.nVocab}, ` +
      `n_embd ${r.nEmbd}, sha256 ${r.sha256})`,
  );
}

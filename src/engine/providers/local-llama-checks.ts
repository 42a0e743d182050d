/**
 * Checks a GGUF file before node-llama-cpp loads it: exists, starts with the GGUF magic, has a
 * parseable header, and holds all of its tensor data. Each failure is a ProviderError('modelLoad')
 * naming the path, which reads better than llama.cpp's errors and sidesteps an upstream leak.
 */
import * as fs from 'node:fs/promises';
import type { Llama } from 'node-llama-cpp';
import { ProviderError } from './types';

type NodeLlamaCpp = typeof import('node-llama-cpp');

/** Every GGUF file starts with these bytes. */
const GGUF_MAGIC = 'GGUF';

/** Rejects missing files and non-GGUF files with a clear modelLoad error before llama.cpp sees them. */
export async function checkGgufFile(modelPath: string): Promise<void> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(modelPath, 'r');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'file not found' : code === 'EISDIR' ? 'it is a directory' : errorText(e);
    throw new ProviderError('modelLoad', `Cannot load model ${modelPath}: ${why}.`, { cause: e });
  }
  try {
    const head = Buffer.alloc(GGUF_MAGIC.length);
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    if (bytesRead < head.length || head.toString('latin1') !== GGUF_MAGIC) {
      throw new ProviderError('modelLoad', `Cannot load model ${modelPath}: not a GGUF file.`);
    }
  } finally {
    await handle.close();
  }
}

/**
 * Parses the GGUF header and checks that all tensor data is present. Catching corrupt and
 * truncated files here gives a clearer message than llama.cpp and avoids an upstream leak: a
 * failed `loadModel` keeps the backend's dispose guard until garbage collection.
 */
export async function checkTensorData(mod: NodeLlamaCpp, llama: Llama, modelPath: string): Promise<void> {
  let expectedBytes: number | undefined;
  try {
    const info = await mod.readGgufFileInfo(modelPath, { logWarnings: false });
    const tensors = info.fullTensorInfo ?? [];
    const first = tensors[0];
    // Split models (several files) are checked by llama.cpp itself.
    if (first && tensors.every((t) => t.filePart === 1)) {
      const insights = await mod.GgufInsights.from(info, llama);
      expectedBytes = Number(BigInt(first.fileOffset) - BigInt(first.offset)) + insights.modelSize;
    }
  } catch (e) {
    throw new ProviderError('modelLoad', `Cannot load model ${modelPath}: not a valid GGUF file (${errorText(e)}).`, { cause: e });
  }
  const actual = (await fs.stat(modelPath)).size;
  if (expectedBytes !== undefined && actual < expectedBytes) {
    throw new ProviderError(
      'modelLoad',
      `Cannot load model ${modelPath}: the file is truncated (${actual} of ${expectedBytes} bytes; an incomplete download?).`,
    );
  }
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * Benchmark: the size of a request's `tools` field (OpenAI wire, as the provider sends it) with
 * 13, 50 and 200 MCP tools next to the built-ins, offered directly vs through the tool-catalog
 * guard's 3 meta-tools (src/engine/mcp-catalog/): bytes and o200k tokens (gpt-tokenizer), and the
 * ratios. The MCP tools are the realistic fakes of test/support/fake-mcp-tools.ts. Run:
 * `npm run bench:mcp-catalog`. Not a test; deterministic (no timing).
 */
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { turnToolCatalog } from '../src/engine/mcp-catalog/catalog';
import { toOpenAITools } from '../src/engine/providers/openai';
import { builtinToolRegistry } from '../src/engine/tools/builtins';
import type { AgentTool } from '../src/engine/tools/types';
import { fakeMcpTools } from '../test/support/fake-mcp-tools';

/** MCP tool counts measured. */
const COUNTS = [13, 50, 200];
/** A threshold above every count: the "direct" side of the comparison. */
const NEVER_META = Number.MAX_SAFE_INTEGER;
/** The default threshold (SPEC 3.3). */
const DEFAULT = 12;

function measure(tools: AgentTool[], threshold: number): { bytes: number; tokens: number; count: number } {
  const catalog = turnToolCatalog(tools, threshold);
  const field = JSON.stringify(toOpenAITools(catalog.offered.map((t) => t.spec)));
  return { bytes: Buffer.byteLength(field, 'utf8'), tokens: countTokens(field), count: catalog.offered.length };
}

const builtins = builtinToolRegistry().list();
const base = measure(builtins, NEVER_META);
console.log(`built-ins alone: ${base.count} tools, ${base.bytes} B, ${base.tokens} tokens\n`);
console.log('MCP tools | direct: tools  bytes  tokens | meta: tools  bytes  tokens | bytes ratio  tokens ratio (direct / meta)');
for (const n of COUNTS) {
  const all = [...builtins, ...fakeMcpTools(n).tools];
  const d = measure(all, NEVER_META);
  const m = measure(all, DEFAULT);
  console.log(
    `${String(n).padStart(9)} | ${String(d.count).padStart(13)} ${String(d.bytes).padStart(6)} ${String(d.tokens).padStart(7)} | ${String(m.count).padStart(11)} ${String(m.bytes).padStart(6)} ${String(m.tokens).padStart(7)} | ${(d.bytes / m.bytes).toFixed(2).padStart(11)}× ${(d.tokens / m.tokens).toFixed(2).padStart(12)}×`,
  );
}

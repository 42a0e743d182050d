import { LocalLlamaProvider } from './src/engine/providers/local-llama';
const M = '/tmp/demo1.gguf';
const req = (x: object = {}) => ({ model: M, messages: [{ role: 'user' as const, content: 'hello' }], temperature: 0, maxTokens: 40, ...x });
async function collect(s: AsyncIterable<unknown>) { const a = []; for await (const e of s) a.push(e); return a; }
async function once(i: number) {
  const p = new LocalLlamaProvider({ threads: 1 });
  await collect(p.stream(req()));
  const ac = new AbortController(); let n = 0;
  try { for await (const e of p.stream(req({ maxTokens: 3000, signal: ac.signal }))) if ((e as any).type === 'text' && ++n === 3) ac.abort(); } catch (e) { }
  for await (const e of p.stream(req({ maxTokens: 3000 }))) if ((e as any).type === 'text') break;
  await collect(p.stream(req({ tools: [{ name: 'read_file', description: 'd', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } }], maxTokens: 400 })));
  try { await collect(p.stream(req({ model: '/tmp/trunc.gguf' }))); } catch {}
  try { await collect(p.stream(req({ model: '/etc/passwd' }))); } catch {}
  await Promise.all([collect(p.stream(req())), collect(p.stream(req()))]);
  const entry = await (p as any).models.get(M);
  let t = performance.now();
  const lap = async (l: string, pr: Promise<unknown> | unknown) => { const timer = setTimeout(() => console.log(i, 'STUCK at', l), 5000); await pr; clearTimeout(timer); t = performance.now(); };
  await lap('tail', entry.tail);
  await lap('chat', entry.chat.dispose({ disposeSequence: false }));
  await lap('ctx', entry.context.dispose());
  await lap('model', entry.model.dispose());
  const llama = await (p as any).llama;
  await lap('llama', llama.dispose());
  (p as any).models.clear(); (p as any).llama = undefined;
}
async function main() { for (let i = 0; i < 6; i++) { await once(i); console.log('ok', i); } }
main();

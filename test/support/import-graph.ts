/**
 * The source tree's import graph, for the architecture test: every module under the given roots
 * with the modules it imports (relative specifiers resolved to files; packages kept by name),
 * type-only imports included — they still tie one module to another's shape — plus finders for
 * cycles (Tarjan's strongly connected components) and for edges that break a rule.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface ImportGraph {
  /** Repository-relative module path → what it imports: repository-relative paths, or package names. */
  readonly edges: Map<string, string[]>;
}

const SOURCE_RE = /\.(ts|mts|cts|js|mjs|svelte)$/;
/** `import … from 'x'`, `import 'x'`, `export … from 'x'`, `import('x')`, `require('x')`. */
const IMPORT_RE = /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|\bimport\s+)['"]([^'"]+)['"]/g;
const RESOLVE_SUFFIXES = ['', '.ts', '.mts', '.js', '.mjs', '.svelte', '/index.ts'];

export function filesUnder(dir: string): string[] {
  const out: string[] = [];
  if (!fs.existsSync(dir)) return out;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...filesUnder(p));
    else if (SOURCE_RE.test(e.name)) out.push(p);
  }
  return out;
}

export function importsOf(file: string): string[] {
  const src = fs.readFileSync(file, 'utf8');
  return [...src.matchAll(IMPORT_RE)].map((m) => m[1]!);
}

function resolve(fromFile: string, spec: string): string | null {
  const base = path.resolve(path.dirname(fromFile), spec);
  for (const s of RESOLVE_SUFFIXES) {
    const p = base + s;
    if (fs.existsSync(p) && fs.statSync(p).isFile()) return p;
  }
  return null;
}

/** The graph of every source file under `roots` (repository-relative), relative to `repoRoot`. */
export function buildImportGraph(repoRoot: string, roots: string[]): ImportGraph {
  const edges = new Map<string, string[]>();
  for (const root of roots) {
    for (const file of filesUnder(path.join(repoRoot, root))) {
      const out: string[] = [];
      for (const spec of importsOf(file)) {
        if (!spec.startsWith('.')) {
          out.push(spec);
          continue;
        }
        const target = resolve(file, spec);
        out.push(target ? path.relative(repoRoot, target).split(path.sep).join('/') : `unresolved:${spec}`);
      }
      edges.set(path.relative(repoRoot, file).split(path.sep).join('/'), out);
    }
  }
  return { edges };
}

/** A copy of the graph with one more edge (probes: show a rule reports what it forbids). */
export function withEdge(g: ImportGraph, from: string, to: string): ImportGraph {
  const edges = new Map([...g.edges].map(([k, v]) => [k, [...v]] as [string, string[]]));
  edges.set(from, [...(edges.get(from) ?? []), to]);
  if (!edges.has(to) && !to.includes(':') && to.includes('/')) edges.set(to, []);
  return { edges };
}

/** Every import cycle (a strongly connected component with more than one module, or a self-import). */
export function findCycles(g: ImportGraph): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of g.edges.get(v) ?? []) {
      if (!g.edges.has(w)) continue;
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || (g.edges.get(v) ?? []).includes(v)) out.push(scc.sort());
    }
  };
  for (const v of [...g.edges.keys()].sort()) if (!idx.has(v)) visit(v);
  return out;
}

/** The edges `from → to` for which `forbidden(from, to)` holds, as "from → to" lines. */
export function violations(g: ImportGraph, forbidden: (from: string, to: string) => boolean): string[] {
  const out: string[] = [];
  for (const [from, tos] of g.edges) for (const to of tos) if (forbidden(from, to)) out.push(`${from} → ${to}`);
  return out.sort();
}

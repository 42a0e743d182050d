import { performance } from 'node:perf_hooks';
import * as fs from 'node:fs';
import { VoxStore } from '../src/engine/store/store';
import { searchBodies, ftsLiteral } from '../src/engine/search/body-search';
import { rankTitles } from '../src/engine/search/fuzzy-title';
const file = process.argv[2]!;
const s = VoxStore.open(file);
const db = s.db;
const qs = ['up', 'inline get', 'ommand', 'deployCallback', 'PassingDatabaseVisitor module', 'file', 'error', 'test the', 'config server', 'lint'];
function t(name: string, fn: (q: string) => unknown) {
  const out: string[] = [];
  for (const q of qs) { const t0 = performance.now(); fn(q); out.push(`${q}:${(performance.now() - t0).toFixed(1)}`); }
  console.log(name.padEnd(14), out.join('  '));
}
const threads = db.prepare('SELECT id, title, updated_at AS updatedAt FROM threads WHERE deleted = 0').all() as any[];
t('readThreads', () => db.prepare('SELECT id, title, updated_at AS updatedAt FROM threads WHERE deleted = 0').all());
t('titles', (q) => rankTitles(q, threads, Date.now(), 20));
t('bodies', (q) => searchBodies(db, q, 20));
const terms = (q: string) => q.toLowerCase().split(' ').filter((x) => x.length >= 3);
t('match ids', (q) => terms(q).length && db.prepare('SELECT rowid FROM search_fts WHERE search_fts MATCH ? ORDER BY rowid DESC LIMIT 2000').all(ftsLiteral(terms(q))));
t('match bm25', (q) => terms(q).length && db.prepare('SELECT rowid, bm25(search_fts) r FROM search_fts WHERE search_fts MATCH ? ORDER BY rowid DESC LIMIT 2000').all(ftsLiteral(terms(q))));
t('match bm25 200', (q) => terms(q).length && db.prepare('SELECT rowid, bm25(search_fts) r FROM search_fts WHERE search_fts MATCH ? ORDER BY rowid DESC LIMIT 200').all(ftsLiteral(terms(q))));
t('match count', (q) => terms(q).length && db.prepare('SELECT count(*) FROM search_fts WHERE search_fts MATCH ?').all(ftsLiteral(terms(q))));
t('match rank', (q) => terms(q).length && db.prepare('SELECT rowid FROM search_fts WHERE search_fts MATCH ? ORDER BY rank LIMIT 20').all(ftsLiteral(terms(q))));

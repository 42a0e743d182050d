// Turns gitleaks' published rule set (config/gitleaks.toml of github.com/gitleaks/gitleaks, MIT)
// into the data file Vox's redaction reads: src/engine/platform/secret-rules.json.
//
//   node scripts/secret-rules.mjs path/to/gitleaks.toml "gitleaks v8.30.0 (b58d3f1)"
//
// The rules are data: ids, regular expressions, keywords, entropy thresholds, allowlists. Go's
// RE2 syntax differs from JavaScript's in a few places, translated here so that each pattern
// means in JavaScript what it meant in Go:
//   - inline flags `(?i)` (to the end of the group), `(?i:…)`, `(?-i:…)`, `(?s:…)`, `(?s)`:
//     JavaScript (Node 20) has no inline flags, so case-insensitive parts spell both cases
//     (`a` → `[aA]`, `[a-z]` → `[a-zA-Z]`) and dot-all parts use `[\s\S]` for `.`;
//   - `\z` → `$` (no multiline flag), `(?P<name>` → `(?<name>`, `[[:alnum:]]` and the other
//     POSIX classes → their ranges;
// and each translated pattern is compiled once here, so a rule JavaScript cannot read stops the
// conversion with its id instead of failing at run time. Path-only rules (no regex: they flag
// file names, not text) and allowlist entries that only list paths or commits are left out.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'smol-toml';

const POSIX = { alnum: 'a-zA-Z0-9', alpha: 'a-zA-Z', digit: '0-9', lower: 'a-z', upper: 'A-Z', space: '\\s', xdigit: '0-9a-fA-F', word: '\\w', punct: '!-\\/:-@\\[-`{-~' };

/** Both cases of the ASCII letters in a class body's ranges and singles, when `fold`. */
function foldClass(body) {
  let out = '';
  const extra = [];
  for (let i = 0; i < body.length; i++) {
    const ch = body[i];
    if (ch === '\\') { out += ch + (body[i + 1] ?? ''); i++; continue; }
    if (body[i + 1] === '-' && body[i + 2] !== undefined && body[i + 2] !== ']') {
      const lo = ch, hi = body[i + 2];
      out += `${lo}-${hi}`;
      if (/[a-z]/.test(lo) && /[a-z]/.test(hi)) extra.push(`${lo.toUpperCase()}-${hi.toUpperCase()}`);
      else if (/[A-Z]/.test(lo) && /[A-Z]/.test(hi)) extra.push(`${lo.toLowerCase()}-${hi.toLowerCase()}`);
      i += 2;
      continue;
    }
    out += ch;
    if (/[a-z]/.test(ch)) extra.push(ch.toUpperCase());
    else if (/[A-Z]/.test(ch)) extra.push(ch.toLowerCase());
  }
  // The other case goes first (after a negation): a trailing `-` stays a literal `-`.
  const negated = out.startsWith('^');
  return negated ? `^${extra.join('')}${out.slice(1)}` : extra.join('') + out;
}

/** A Go RE2 pattern as a JavaScript one with the same meaning (see the header). */
export function translate(src) {
  let out = '';
  // One entry per open group: the flags in force inside it.
  const stack = [{ i: false, s: false }];
  const flags = () => stack[stack.length - 1];
  for (let p = 0; p < src.length; p++) {
    const ch = src[p];
    if (ch === '\\') {
      const next = src[p + 1];
      if (next === 'z') { out += '$'; p++; continue; }
      if (next === 'Q' || next === 'A') throw new Error(`\\${next} is not supported`);
      out += ch + next;
      p++;
      continue;
    }
    if (ch === '[') {
      let q = p + 1;
      let body = '';
      if (src[q] === '^') { body += '^'; q++; }
      if (src[q] === ']') { body += '\\]'; q++; }
      while (q < src.length && src[q] !== ']') {
        if (src[q] === '\\') { body += src[q] + src[q + 1]; q += 2; continue; }
        const posix = /^\[:(\w+):\]/.exec(src.slice(q));
        if (posix) {
          if (!POSIX[posix[1]]) throw new Error(`POSIX class ${posix[1]} is not supported`);
          body += POSIX[posix[1]];
          q += posix[0].length;
          continue;
        }
        body += src[q];
        q++;
      }
      out += `[${flags().i ? foldClass(body) : body}]`;
      p = q;
      continue;
    }
    if (ch === '(') {
      const inline = /^\(\?([is-]+)(\)|:)/.exec(src.slice(p));
      if (inline) {
        const next = { ...flags() };
        let on = true;
        for (const f of inline[1]) {
          if (f === '-') on = false;
          else next[f] = on;
        }
        if (inline[2] === ')') stack[stack.length - 1] = next; // to the end of the current group
        else { stack.push(next); out += '(?:'; }
        p += inline[0].length - 1;
        continue;
      }
      const named = /^\(\?P</.exec(src.slice(p));
      if (named) { stack.push({ ...flags() }); out += '(?<'; p += 3; continue; }
      stack.push({ ...flags() });
      out += ch;
      continue;
    }
    if (ch === ')') {
      stack.pop();
      if (stack.length === 0) throw new Error('unbalanced )');
      out += ch;
      continue;
    }
    if (ch === '.' && flags().s) { out += '[\\s\\S]'; continue; }
    if (flags().i && /[a-zA-Z]/.test(ch) && !inGroupName(src, p)) { out += `[${ch.toLowerCase()}${ch.toUpperCase()}]`; continue; }
    out += ch;
  }
  return out;
}

/** Whether `p` is inside the name of a named group (`(?P<name>`), which is never folded. */
function inGroupName(src, p) {
  const before = src.slice(0, p);
  return /\(\?<\w*$/.test(before);
}

function compiles(id, source) {
  try {
    new RegExp(source, 'd');
  } catch (e) {
    throw new Error(`rule ${id}: ${e.message}\n  ${source}`);
  }
}

function main() {
  const [tomlPath, sourceLabel] = process.argv.slice(2);
  if (!tomlPath || !sourceLabel) {
    process.stderr.write('usage: node scripts/secret-rules.mjs path/to/gitleaks.toml "gitleaks vX.Y.Z (commit)"\n');
    process.exit(2);
  }
  const config = parse(fs.readFileSync(tomlPath, 'utf8'));
  const rules = [];
  for (const r of config.rules) {
    if (!r.regex) continue;
    const regex = translate(r.regex);
    compiles(r.id, regex);
    const allowlists = [];
    for (const a of r.allowlists ?? []) {
      if (!a.regexes?.length && !a.stopwords?.length) continue;
      const regexes = (a.regexes ?? []).map((x) => translate(x));
      regexes.forEach((x) => compiles(`${r.id} (allowlist)`, x));
      allowlists.push({
        ...(regexes.length ? { regexes } : {}),
        ...(a.stopwords?.length ? { stopwords: a.stopwords.map((s) => s.toLowerCase()) } : {}),
        target: a.regexTarget ?? 'secret',
        condition: a.condition ?? 'OR',
        // A condition AND over an entry that listed paths cannot hold without a path: such an
        // entry never allows in Vox (text has no file name).
        ...(a.condition === 'AND' && a.paths?.length ? { needsPath: true } : {}),
      });
    }
    rules.push({
      id: r.id,
      regex,
      ...(r.secretGroup ? { secretGroup: r.secretGroup } : {}),
      ...(r.entropy ? { entropy: r.entropy } : {}),
      keywords: (r.keywords ?? []).map((k) => k.toLowerCase()),
      ...(allowlists.length ? { allowlists } : {}),
    });
  }
  const global = config.allowlist ?? {};
  const data = {
    source: sourceLabel,
    license: 'MIT, Copyright (c) 2019 Zachary Rice (gitleaks)',
    generatedBy: 'scripts/secret-rules.mjs',
    allowlist: {
      regexes: (global.regexes ?? []).map((x) => translate(x)),
      stopwords: (global.stopwords ?? []).map((s) => s.toLowerCase()),
    },
    rules,
  };
  data.allowlist.regexes.forEach((x) => compiles('global allowlist', x));
  const out = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../src/engine/platform/secret-rules.json');
  fs.writeFileSync(out, JSON.stringify(data, null, 1) + '\n');
  process.stdout.write(`${rules.length} rules → ${path.relative(process.cwd(), out)}\n`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) main();

/**
 * A small, conservative parser of the shell command lines `run_command` receives, so permission
 * rules match parsed commands, never substrings. It understands words with '…', "…" and \
 * quoting, the chain operators `&&`, `||`, `;`, `|`, `&` and newlines (every sub-command is
 * returned; each must pass the rules), `FOO=1` environment prefixes (also after `env`), `sudo`
 * (with its options) and redirections. Anything it cannot see through — `$( )`, backticks,
 * `( )` subshells, `{ }` groups, `<( )`, `$VAR` expansions, here-documents, unterminated quotes —
 * makes the whole line `opaque`: the caller must ask the user, whatever the rules say.
 */

/** One simple command of a chain. */
export interface SimpleCommand {
  /** The words after the environment prefix and `sudo`, unquoted: argv[0] is the program. */
  argv: string[];
  /** `NAME=value` prefixes (and those after `env`). */
  env: Record<string, string>;
  /** Run through `sudo` (its options dropped). */
  sudo: boolean;
  /** Files written by `>`/`>>` redirections (`/dev/null` and `&N` duplications excluded). */
  writesTo: string[];
}

export type ParsedCommandLine =
  | { kind: 'parsed'; commands: SimpleCommand[] }
  | { kind: 'opaque'; reason: string };

/** Longest command line parsed; a longer one is opaque (asked). */
export const MAX_COMMAND_LINE_CHARS = 16_000;

/** sudo options that take a value (`sudo -u bob cmd`). */
const SUDO_VALUE_OPTIONS = new Set(['-u', '-g', '-h', '-p', '-C', '-D', '-r', '-t', '-U', '-T', '--user', '--group', '--host', '--prompt', '--chdir']);
/** env options that take a value (`env -u NAME cmd`). */
const ENV_VALUE_OPTIONS = new Set(['-u', '--unset', '-C', '--chdir', '-S']);

/** `quotedFrom`: index in `v` where quoted text begins (-1: none); `A="x y"` is still an assignment, `'A=1'` is not. */
type Token = { t: 'word'; v: string; quotedFrom: number } | { t: 'op'; v: string } | { t: 'redir'; op: string; fd: string };

class Opaque extends Error {}

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

function tokenize(line: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  let word = '';
  let inWord = false;
  let quotedFrom = -1;
  const flush = () => {
    if (inWord) out.push({ t: 'word', v: word, quotedFrom });
    word = '';
    inWord = false;
    quotedFrom = -1;
  };
  const markQuoted = () => {
    if (quotedFrom < 0) quotedFrom = word.length;
  };
  while (i < line.length) {
    const c = line[i]!;
    if (c === ' ' || c === '\t') {
      flush();
      i++;
      continue;
    }
    if (c === '\n' || c === ';') {
      flush();
      out.push({ t: 'op', v: ';' });
      i++;
      continue;
    }
    if (c === '#' && !inWord) {
      // A comment runs to the end of the line.
      while (i < line.length && line[i] !== '\n') i++;
      continue;
    }
    if (c === '&' || c === '|') {
      flush();
      if (line[i + 1] === c) {
        out.push({ t: 'op', v: c + c });
        i += 2;
      } else if (c === '|' && line[i + 1] === '&') {
        out.push({ t: 'op', v: '|' });
        i += 2;
      } else if (c === '&' && line[i + 1] === '>') {
        // &> file: stdout and stderr to a file.
        i += line[i + 2] === '>' ? 3 : 2;
        out.push({ t: 'redir', op: '>', fd: '&' });
      } else {
        out.push({ t: 'op', v: c });
        i++;
      }
      continue;
    }
    if (c === '>' || c === '<') {
      // A word of digits just before is the fd (2>file).
      const fd = inWord && quotedFrom < 0 && /^\d+$/.test(word) ? word : '';
      if (fd) {
        word = '';
        inWord = false;
      } else flush();
      if (c === '<' && line[i + 1] === '(') throw new Opaque('process substitution <( )');
      if (c === '<' && line[i + 1] === '<') throw new Opaque('a here-document');
      let op = c;
      i++;
      if (c === '>' && (line[i] === '>' || line[i] === '|')) op += line[i++]!;
      if (line[i] === '&') {
        op += '&';
        i++;
      }
      out.push({ t: 'redir', op, fd });
      continue;
    }
    if (c === '(' || c === ')') throw new Opaque('a ( ) subshell');
    if ((c === '{' || c === '}') && !inWord && (i + 1 >= line.length || /[\s;]/.test(line[i + 1]!))) throw new Opaque('a { } group');
    if (c === '`') throw new Opaque('a `…` command substitution');
    if (c === '$') throw new Opaque(line[i + 1] === '(' ? 'a $( ) command substitution' : 'a $ expansion');
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) throw new Opaque('an unterminated quote');
      markQuoted();
      word += line.slice(i + 1, end);
      inWord = true;
      i = end + 1;
      continue;
    }
    if (c === '"') {
      i++;
      inWord = true;
      markQuoted();
      for (;;) {
        if (i >= line.length) throw new Opaque('an unterminated quote');
        const d = line[i]!;
        if (d === '"') {
          i++;
          break;
        }
        if (d === '`') throw new Opaque('a `…` command substitution');
        if (d === '$') throw new Opaque(line[i + 1] === '(' ? 'a $( ) command substitution' : 'a $ expansion');
        if (d === '\\' && i + 1 < line.length && '"\\$`\n'.includes(line[i + 1]!)) {
          if (line[i + 1] !== '\n') word += line[i + 1];
          i += 2;
          continue;
        }
        word += d;
        i++;
      }
      continue;
    }
    if (c === '\\') {
      if (i + 1 >= line.length) throw new Opaque('a trailing backslash');
      if (line[i + 1] !== '\n') {
        markQuoted();
        word += line[i + 1];
        inWord = true;
      }
      i += 2;
      continue;
    }
    word += c;
    inWord = true;
    i++;
  }
  flush();
  return out;
}

function finishCommand(words: Array<{ v: string; quotedFrom: number }>, writesTo: string[]): SimpleCommand | null {
  const env: Record<string, string> = {};
  let k = 0;
  const takeAssignments = () => {
    while (k < words.length && ASSIGNMENT.test(words[k]!.v) && (words[k]!.quotedFrom < 0 || words[k]!.quotedFrom > words[k]!.v.indexOf('='))) {
      const w = words[k]!.v;
      const eq = w.indexOf('=');
      env[w.slice(0, eq)] = w.slice(eq + 1);
      k++;
    }
  };
  takeAssignments();
  let sudo = false;
  for (let guard = 0; guard < 8 && k < words.length; guard++) {
    const w = words[k]!.v;
    if (w === 'sudo') {
      sudo = true;
      k++;
      while (k < words.length && words[k]!.v.startsWith('-')) {
        const opt = words[k]!.v;
        k++;
        if (opt === '--') break;
        if (SUDO_VALUE_OPTIONS.has(opt)) k++;
      }
      takeAssignments();
    } else if (w === 'env') {
      k++;
      while (k < words.length && words[k]!.v.startsWith('-')) {
        const opt = words[k]!.v;
        k++;
        if (opt === '--') break;
        if (ENV_VALUE_OPTIONS.has(opt)) k++;
      }
      takeAssignments();
    } else break;
  }
  const argv = words.slice(k).map((w) => w.v);
  if (argv.length === 0 && Object.keys(env).length === 0 && !sudo && writesTo.length === 0) return null;
  return { argv, env, sudo, writesTo };
}

/** Parses one command line; never throws. */
export function parseCommandLine(line: string): ParsedCommandLine {
  if (line.length > MAX_COMMAND_LINE_CHARS) return { kind: 'opaque', reason: `the command is longer than ${MAX_COMMAND_LINE_CHARS} characters` };
  let tokens: Token[];
  try {
    tokens = tokenize(line);
  } catch (e) {
    if (e instanceof Opaque) return { kind: 'opaque', reason: `it contains ${e.message}` };
    throw e;
  }
  const commands: SimpleCommand[] = [];
  let words: Array<{ v: string; quotedFrom: number }> = [];
  let writesTo: string[] = [];
  let lastWasOp = true;
  const end = (): ParsedCommandLine | null => {
    const cmd = finishCommand(words, writesTo);
    if (cmd) commands.push(cmd);
    words = [];
    writesTo = [];
    return null;
  };
  for (let i = 0; i < tokens.length; i++) {
    const tok = tokens[i]!;
    if (tok.t === 'word') {
      words.push({ v: tok.v, quotedFrom: tok.quotedFrom });
      lastWasOp = false;
    } else if (tok.t === 'redir') {
      const target = tokens[i + 1];
      if (!target || target.t !== 'word') return { kind: 'opaque', reason: 'it has a redirection without a target' };
      i++;
      const duplicates = tok.op.endsWith('&') && /^(\d+|-)$/.test(target.v);
      if (tok.op.startsWith('>') && !duplicates && target.v !== '/dev/null') writesTo.push(target.v);
      lastWasOp = false;
    } else {
      if (lastWasOp && tok.v !== ';') return { kind: 'opaque', reason: `it has "${tok.v}" without a command before it` };
      end();
      lastWasOp = true;
    }
  }
  end();
  if (commands.length === 0) return { kind: 'opaque', reason: 'it is empty' };
  return { kind: 'parsed', commands };
}

/** A sub-command as one line for reasons and logs (words re-quoted when they need it). */
export function describeCommand(c: SimpleCommand): string {
  const q = (w: string) => (/^[A-Za-z0-9_@%+=:,./*-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`);
  const env = Object.entries(c.env).map(([k, v]) => `${k}=${q(v)}`);
  return [...env, ...(c.sudo ? ['sudo'] : []), ...c.argv.map(q), ...c.writesTo.map((f) => `> ${q(f)}`)].join(' ');
}

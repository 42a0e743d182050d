/**
 * Money in the ledger (SPEC 3.4): integer micro-dollars (1 µ$ = $0.000001) everywhere, never
 * floats; the Battery Unit (1 BU = $0.001 = 1,000 µ$) as an input unit; and
 * `evalCostExpression`, the tiny arithmetic parser price cards and users write prices in
 * (`"3.0/1e6"` → 0.000003): numbers, `+ - * / ( )` and nothing else — never `eval`.
 */
import { formatMicroUsd, MICRO_USD_PER_BU, MICRO_USD_PER_USD, usdToMicroOrNull } from '../../protocol/ledger';
import { LedgerError } from './errors';

export { formatMicroUsd, MICRO_USD_PER_BU, MICRO_USD_PER_USD };

/** The longest cost expression read (a price is a number or a short quotient; longer is not a price). */
export const MAX_COST_EXPRESSION_CHARS = 200;
/** How deep parentheses may nest in a cost expression (the parser recurses once per level). */
export const MAX_COST_EXPRESSION_DEPTH = 16;

/** USD (as a user or a card writes it) to whole micro-dollars, rounded half away from zero; a non-finite or unsafe amount is a typed error. */
export function usdToMicro(usd: number): number {
  const micro = usdToMicroOrNull(usd);
  if (micro === null) throw new LedgerError('invalidAmount', `not an amount of dollars in range: ${usd}`);
  return micro;
}

/** BU to micro-dollars (BU may have up to three decimals: 0.001 BU = 1 µ$). */
export function buToMicro(bu: number): number {
  return usdToMicro(bu / 1_000);
}

/** Micro-dollars as BU (for `InsufficientBattery {requiredBu, remainingBu}`). */
export function microToBu(micro: number): number {
  return micro / MICRO_USD_PER_BU;
}

type Token = { kind: 'num'; value: number; at: number } | { kind: 'op'; value: '+' | '-' | '*' | '/' | '(' | ')'; at: number };

const NUMBER = /^(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?/;

function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (c === ' ' || c === '\t') { i++; continue; }
    if ('+-*/()'.includes(c)) { out.push({ kind: 'op', value: c as '+', at: i }); i++; continue; }
    const m = NUMBER.exec(src.slice(i));
    if (!m) throw new LedgerError('invalidExpression', `unexpected "${c}" at ${i + 1} in cost expression "${src}" (only numbers and + - * / ( ) are allowed)`);
    out.push({ kind: 'num', value: Number(m[0]), at: i });
    i += m[0].length;
  }
  return out;
}

/**
 * Evaluates a cost expression to a number of dollars. Grammar: expr = term (('+'|'-') term)*;
 * term = unary (('*'|'/') unary)*; unary = ('+'|'-')* atom; atom = number | '(' expr ')'.
 * Division by zero, a non-finite result, a negative cost, anything else than the grammar, more
 * than MAX_COST_EXPRESSION_CHARS or deeper than MAX_COST_EXPRESSION_DEPTH: LedgerError
 * `invalidExpression`.
 */
export function evalCostExpression(src: string): number {
  if (typeof src !== 'string' || src.trim() === '') throw new LedgerError('invalidExpression', 'empty cost expression');
  if (src.length > MAX_COST_EXPRESSION_CHARS) throw new LedgerError('invalidExpression', `cost expression longer than ${MAX_COST_EXPRESSION_CHARS} characters`);
  const tokens = tokenize(src);
  let pos = 0;
  const fail = (why: string): never => { throw new LedgerError('invalidExpression', `${why} in cost expression "${src}"`); };
  const peek = (): Token | undefined => tokens[pos];
  const isOp = (t: Token | undefined, ...ops: string[]): boolean => t?.kind === 'op' && ops.includes(t.value);
  const finite = (v: number): number => (Number.isFinite(v) ? v : fail('a result out of range'));

  const expr = (depth: number): number => {
    let v = term(depth);
    while (isOp(peek(), '+', '-')) {
      const op = tokens[pos++]!.value;
      const r = term(depth);
      v = finite(op === '+' ? v + r : v - r);
    }
    return v;
  };
  const term = (depth: number): number => {
    let v = unary(depth);
    while (isOp(peek(), '*', '/')) {
      const op = tokens[pos++]!.value;
      const r = unary(depth);
      if (op === '/' && r === 0) fail('division by zero');
      v = finite(op === '*' ? v * r : v / r);
    }
    return v;
  };
  const unary = (depth: number): number => {
    let sign = 1;
    while (isOp(peek(), '+', '-')) if (tokens[pos++]!.value === '-') sign = -sign;
    return sign * atom(depth);
  };
  const atom = (depth: number): number => {
    const t = peek();
    if (!t) return fail('an unexpected end');
    if (t.kind === 'num') { pos++; return finite(t.value); }
    if (t.value !== '(') return fail(`an unexpected "${t.value}" at ${t.at + 1}`);
    if (depth >= MAX_COST_EXPRESSION_DEPTH) fail(`parentheses nested deeper than ${MAX_COST_EXPRESSION_DEPTH}`);
    pos++;
    const v = expr(depth + 1);
    if (!isOp(peek(), ')')) fail('a missing ")"');
    pos++;
    return v;
  };

  const value = expr(0);
  if (pos < tokens.length) fail(`an unexpected "${tokens[pos]!.value}" at ${tokens[pos]!.at + 1}`);
  if (value < 0) fail('a negative cost');
  return value === 0 ? 0 : value;
}

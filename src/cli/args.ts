/** Minimal, strict argument parsing for the `vox` CLI: unknown flags are errors, not ignored. */

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export interface FlagSpec { [name: string]: 'string' | 'boolean' }
export interface Parsed { positional: string[]; flags: Record<string, string | boolean> }

export function parseArgs(argv: string[], spec: FlagSpec): Parsed {
  const positional: string[] = [];
  const flags: Record<string, string | boolean> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      positional.push(...argv.slice(i + 1));
      break;
    }
    if (!a.startsWith('--')) {
      positional.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const name = a.slice(2, eq < 0 ? undefined : eq);
    const kind = spec[name];
    if (!kind) throw new UsageError(`unknown option --${name}`);
    if (kind === 'boolean') {
      if (eq >= 0) throw new UsageError(`--${name} takes no value`);
      flags[name] = true;
    } else {
      const v = eq >= 0 ? a.slice(eq + 1) : argv[++i];
      if (v === undefined || (eq < 0 && v.startsWith('--'))) throw new UsageError(`--${name} needs a value`);
      flags[name] = v;
    }
  }
  return { positional, flags };
}

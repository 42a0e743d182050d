/** Printing command results: JSON (one document, `--json`) or human lines; the label of a typed error. */
export type Flags = { json?: boolean };

/** `StoreError (notSqlite)` from a domain and a code: the same words for engine and wire errors. */
export function errorLabel(domain: string, code: string): string {
  return `${domain.charAt(0).toUpperCase()}${domain.slice(1)}Error (${code})`;
}

export function print(flags: Flags, human: string, json: unknown): void {
  process.stdout.write(flags.json ? JSON.stringify(json, null, 2) + '\n' : human + '\n');
}

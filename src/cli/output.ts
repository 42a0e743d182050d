/** Printing command results: JSON (one document, `--json`) or human lines. */
export type Flags = { json?: boolean };

export function print(flags: Flags, human: string, json: unknown): void {
  process.stdout.write(flags.json ? JSON.stringify(json, null, 2) + '\n' : human + '\n');
}

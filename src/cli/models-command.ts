/**
 * `vox models [--provider P] [--base-url URL] [--test MODEL] [--json]`: a provider's models from
 * its own API (protocol `listModels`), optionally followed by the connection test of one model
 * (`testModel`). The provider defaults to `compat` when a base URL is given, else to the provider
 * of $VOX_MODEL when it is one that lists models, else `openai`. Keys come from the environment
 * (OPENAI_API_KEY, ANTHROPIC_API_KEY, OPENROUTER_API_KEY, VOX_COMPAT_API_KEY). A failure exits 1
 * with the typed error naming host:port and the cause (`vox: ConnectError (refused): …`).
 */
import { Option, type Command } from 'commander';
import { CONNECT_PROVIDER_IDS, type ConnectProviderId } from '../protocol/commands/models';
import { withClient } from './connect';
import { print, type Flags } from './output';

type ModelsFlags = Flags & { provider?: ConnectProviderId; baseUrl?: string; test?: string; cwd?: string };

export function defaultProvider(flags: ModelsFlags, env: NodeJS.ProcessEnv = process.env): ConnectProviderId {
  if (flags.provider) return flags.provider;
  if (flags.baseUrl) return 'compat';
  const kind = env.VOX_MODEL?.split(':')[0] ?? '';
  return (CONNECT_PROVIDER_IDS as readonly string[]).includes(kind) ? (kind as ConnectProviderId) : 'openai';
}

export function registerModelsCommand(program: Command, run: (p: Promise<number>) => void): void {
  program.command('models').description("list a provider's models from its API (and test one with --test)")
    .addOption(new Option('--provider <provider>', 'which provider (default: compat with --base-url, else the one of $VOX_MODEL, else openai)').choices([...CONNECT_PROVIDER_IDS]))
    .option('--base-url <url>', "the provider's base URL (default: its $…_BASE_URL, else its usual address)")
    .option('--test <model>', 'then send the smallest real request to this model and report the time')
    .option('--cwd <dir>', 'workspace (default: the current directory)')
    .option('--json', 'print JSON')
    .addHelpText('after', '\nexamples:\n  vox models --provider ollama\n  vox models --base-url http://127.0.0.1:8000/v1 --test my-model\n  OPENAI_API_KEY=… vox models --provider openai --json')
    .action((flags: ModelsFlags) => run(models(flags)));
}

async function models(flags: ModelsFlags): Promise<number> {
  const provider = defaultProvider(flags);
  return withClient({ cwd: flags.cwd ?? process.cwd(), autoCheckpoints: false, reading: true }, async ({ client }) => {
    const baseUrl = flags.baseUrl ? { baseUrl: flags.baseUrl } : {};
    const list = await client.call('listModels', { provider, ...baseUrl });
    const test = flags.test ? await client.call('testModel', { ref: `${provider}:${flags.test}`, ...baseUrl }) : undefined;
    const lines = [
      `${list.label} at ${list.endpoint} (${list.baseUrl}): ${list.models.length} model${list.models.length === 1 ? '' : 's'}`,
      ...list.models.map((m) => `${provider}:${m.id}${m.label ? `\t${m.label}` : ''}${m.contextWindow ? `\t${m.contextWindow} tokens` : ''}`),
      ...(test ? [`test ${test.ref}: ok in ${test.latencyMs} ms${test.reply ? ` ("${test.reply.trim()}")` : ''}`] : []),
    ];
    print(flags, lines.join('\n'), test ? { ...list, test } : list);
    return 0;
  });
}

/**
 * The default sampling settings of runs (SPEC 6.3 posture): the host's raw values (VS Code:
 * `vox.sampling.temperature`, `vox.sampling.topP`, `vox.sampling.reasoningEffort`; the CLI:
 * VOX_TEMPERATURE, VOX_TOP_P, VOX_REASONING_EFFORT) validated here. Unset or null means the
 * provider's default. A bad value is a typed `settings/invalidSetting` error naming the setting.
 */
import { VoxError } from '../../protocol/wire/vox-error';
import type { ReasoningEffort, SamplingSettings } from '../../protocol/posture';

/** Widest temperature any provider of Vox accepts (OpenAI: 0..2; Anthropic: 0..1, which it enforces itself). */
export const MAX_TEMPERATURE = 2;
/** top_p is a probability mass. */
export const MAX_TOP_P = 1;
const EFFORTS: readonly ReasoningEffort[] = ['low', 'medium', 'high'];

export class SamplingSettingsError extends VoxError<'settings'> {
  override readonly name = 'SamplingSettingsError';
  readonly domain = 'settings' as const;
  constructor(message: string) {
    super('invalidSetting', message);
  }
}

const unset = (v: unknown) => v === undefined || v === null || v === '';

function numberIn(name: string, v: unknown, max: number): number | null {
  if (unset(v)) return null;
  const n = typeof v === 'string' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isFinite(n) || n < 0 || n > max) {
    throw new SamplingSettingsError(`${name} must be a number from 0 to ${max} (or empty for the provider's default), not ${JSON.stringify(v)}`);
  }
  return n;
}

/** Validates the raw settings `{temperature?, topP?, reasoningEffort?}` (undefined: all defaults). */
export function parseSampling(raw: unknown): SamplingSettings {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new SamplingSettingsError('the sampling settings must be an object');
  const r = raw as Record<string, unknown>;
  const effort = r.reasoningEffort;
  if (!unset(effort) && !EFFORTS.includes(effort as ReasoningEffort)) {
    throw new SamplingSettingsError(`vox.sampling.reasoningEffort must be one of ${EFFORTS.join(', ')} (or empty for the provider's default), not ${JSON.stringify(effort)}`);
  }
  return {
    temperature: numberIn('vox.sampling.temperature', r.temperature, MAX_TEMPERATURE),
    topP: numberIn('vox.sampling.topP', r.topP, MAX_TOP_P),
    reasoningEffort: unset(effort) ? null : (effort as ReasoningEffort),
  };
}


/**
 * `vscode-lm:<id or family>` — VS Code's Language Model API (Copilot and any model an extension
 * contributes) behind the engine's ModelProvider interface. Its failures (no consent, model gone,
 * quota, unsupported) become typed ProviderErrors with messages a user can act on.
 */
import * as vscode from 'vscode';
import type { ChatMessage, ModelProvider, ProviderEvent, StreamRequest } from '../engine/providers/types';
import type { ProviderFactory } from '../engine/providers/registry';
import { ProviderError } from '../engine/providers/types';

function toLmMessages(messages: ChatMessage[]): vscode.LanguageModelChatMessage[] {
  const out: vscode.LanguageModelChatMessage[] = [];
  for (const m of messages) {
    if (m.role === 'system' || m.role === 'user') out.push(vscode.LanguageModelChatMessage.User(m.content));
    else if (m.role === 'assistant') {
      const parts: (vscode.LanguageModelTextPart | vscode.LanguageModelToolCallPart)[] = [];
      if (m.content) parts.push(new vscode.LanguageModelTextPart(m.content));
      for (const c of m.toolCalls ?? []) {
        let input: object = {};
        try {
          const parsed: unknown = JSON.parse(c.argumentsJson);
          if (parsed && typeof parsed === 'object') input = parsed;
        } catch {
          input = { invalid_arguments_json: c.argumentsJson };
        }
        parts.push(new vscode.LanguageModelToolCallPart(c.id, c.name, input));
      }
      out.push(vscode.LanguageModelChatMessage.Assistant(parts));
    } else {
      out.push(vscode.LanguageModelChatMessage.User([new vscode.LanguageModelToolResultPart(m.toolCallId, [new vscode.LanguageModelTextPart(m.content)])]));
    }
  }
  return out;
}

function mapError(e: unknown, model: string): ProviderError {
  if (e instanceof ProviderError) return e;
  if (e instanceof vscode.LanguageModelError) {
    if (e.code === vscode.LanguageModelError.NoPermissions.name) return new ProviderError('auth', `VS Code has no consent to use "${model}" for Vox. Run the prompt again and allow access when VS Code asks.`, { cause: e });
    if (e.code === vscode.LanguageModelError.Blocked.name) return new ProviderError('rateLimited', `The quota for "${model}" is used up or the request was blocked: ${e.message}`, { cause: e });
    if (e.code === vscode.LanguageModelError.NotFound.name) return new ProviderError('notSupported', `The language model "${model}" is no longer available in VS Code.`, { cause: e });
    return new ProviderError('server', `VS Code language model error (${e.code}): ${e.message}`, { cause: e });
  }
  return new ProviderError('network', (e as Error)?.message ?? String(e), { cause: e });
}

async function findModel(model: string): Promise<vscode.LanguageModelChat | undefined> {
  return (await vscode.lm.selectChatModels({ id: model }))[0] ?? (await vscode.lm.selectChatModels({ family: model }))[0];
}

export class VsCodeLmProvider implements ModelProvider {
  readonly id = 'vscode-lm';
  readonly isLocal = false;

  /** The context meter: the window VS Code reports for the model (`maxInputTokens`). */
  async contextWindow(model: string): Promise<number | null> {
    return (await findModel(model))?.maxInputTokens ?? null;
  }

  /** The context meter: the model's own count (`countTokens`) of each message. */
  async countPromptTokens(req: { model: string; messages: StreamRequest['messages'] }): Promise<number> {
    const m = await findModel(req.model);
    if (!m) throw new ProviderError('notSupported', `No VS Code language model matches "${req.model}".`);
    let n = 0;
    for (const msg of toLmMessages(req.messages)) n += await m.countTokens(msg);
    return n;
  }

  async *stream(req: StreamRequest): AsyncIterable<ProviderEvent> {
    const models = [...(await vscode.lm.selectChatModels({ id: req.model })), ...(await vscode.lm.selectChatModels({ family: req.model }))];
    const model = models[0];
    if (!model) throw new ProviderError('notSupported', `No VS Code language model matches "${req.model}". Install or sign in to a model provider (e.g. GitHub Copilot), then pick one with "Vox: Select Model".`);
    const cts = new vscode.CancellationTokenSource();
    const onAbort = () => cts.cancel();
    req.signal?.addEventListener('abort', onAbort);
    let sawToolCall = false;
    try {
      const tools = (req.tools ?? []).map((t) => ({ name: t.name, description: t.description, inputSchema: t.parameters }));
      const response = await model.sendRequest(toLmMessages(req.messages), tools.length ? { tools } : {}, cts.token);
      for await (const part of response.stream) {
        if (req.signal?.aborted) break;
        if (part instanceof vscode.LanguageModelTextPart) yield { type: 'text', delta: part.value };
        else if (part instanceof vscode.LanguageModelToolCallPart) {
          sawToolCall = true;
          yield { type: 'toolCall', call: { id: part.callId, name: part.name, argumentsJson: JSON.stringify(part.input) } };
        }
      }
      if (req.signal?.aborted) throw new ProviderError('cancelled', 'cancelled');
      yield { type: 'done', stopReason: sawToolCall ? 'toolCalls' : 'end' };
    } catch (e) {
      if (req.signal?.aborted) throw new ProviderError('cancelled', 'cancelled');
      throw mapError(e, req.model);
    } finally {
      req.signal?.removeEventListener('abort', onAbort);
      cts.dispose();
    }
  }
}

/** `vscode-lm:<id or family>` for the engine's provider registry. */
export const vscodeLmFactory: ProviderFactory = {
  kind: 'vscode-lm',
  resolve: (model, ref) => ({ provider: new VsCodeLmProvider(), model, label: ref, toolsEnabled: true }),
};

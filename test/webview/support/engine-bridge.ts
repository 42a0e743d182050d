/**
 * The extension host's side of a chat webview for tests that drive the webview Controller
 * against a real engine (like src/extension/chat-view.ts): one protocol session per connection,
 * an unsolicited `settings` update after connecting, and messages structured-cloned and
 * delivered asynchronously in order, as VS Code's postMessage does.
 */
import type { Engine } from '../../../src/engine/engine';
import { ownerGrant } from '../../../src/protocol/commands/grants';
import type { ClientCommand } from '../../../src/protocol/commands';
import type { HostAction, HostBridge } from '../../../webview/src/lib/host-bridge';

export class EngineBridge {
  session: ReturnType<Engine['connect']> | null = null;
  state: unknown = undefined;
  readonly actions: HostAction[] = [];
  /** Every command the webview sent, in order. */
  readonly sent: ClientCommand[] = [];
  private listener: ((d: unknown) => void) | null = null;

  constructor(private readonly engine: Engine) {}

  connect(): void {
    this.session?.dispose();
    const session = this.engine.connect((u) => {
      const copy = structuredClone(u);
      setImmediate(() => this.listener?.(copy));
    }, ownerGrant('test webview'));
    this.session = session;
    const settings = structuredClone({ type: 'settings' as const, ...session.settings() });
    setImmediate(() => this.listener?.(settings));
  }

  dispose(): void {
    this.session?.dispose();
    this.session = null;
  }

  bridge(): HostBridge {
    return {
      send: (c: ClientCommand) => {
        const copy = structuredClone(c);
        this.sent.push(copy);
        setImmediate(() => this.session?.handle(copy));
      },
      sendHostAction: (a) => this.actions.push(a),
      onMessage: (l) => {
        this.listener = l;
        return () => (this.listener = null);
      },
      getState: () => this.state,
      setState: (s) => (this.state = structuredClone(s)),
    };
  }
}

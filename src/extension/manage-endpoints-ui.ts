/**
 * VS Code's side of "Vox: Manage Model Endpoints…" (the flow: manage-endpoints.ts): the list as a
 * quick pick whose rows have Rename and Remove buttons (accepting a row offers Rename / Edit URL
 * and key / Remove), the new name as an input box checked as it is typed, removal confirmed in a
 * modal dialog, the outcome as a notification.
 */
import * as vscode from 'vscode';
import type { ListedEndpoint, ManageChoice, ManageEndpointsUi } from './manage-endpoints';

export const MANAGE_ENDPOINTS_COMMAND = 'vox.manageEndpoints';

const ACTIONS: { label: string; action: 'rename' | 'edit' | 'remove' }[] = [
  { label: '$(edit) Rename…', action: 'rename' },
  { label: '$(link) Edit URL and key…', action: 'edit' },
  { label: '$(trash) Remove', action: 'remove' },
];

interface Row extends vscode.QuickPickItem {
  endpoint?: string;
}

function pick(endpoints: ListedEndpoint[], model: string): Promise<ManageChoice | undefined> {
  const RENAME: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('edit'), tooltip: 'Rename' };
  const REMOVE: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('trash'), tooltip: 'Remove' };
  return new Promise((resolve) => {
    const qp = vscode.window.createQuickPick<Row>();
    let settled = false;
    const done = (choice: ManageChoice | undefined) => {
      if (settled) return;
      settled = true;
      resolve(choice);
      qp.dispose();
    };
    qp.title = 'Vox: Model Endpoints';
    qp.placeholder = endpoints.length ? `OpenAI-compatible endpoints — rename, edit or remove one (the model: ${model})` : 'No OpenAI-compatible endpoints yet';
    qp.ignoreFocusOut = true;
    qp.items = [
      ...endpoints.map((e) => ({
        label: e.name, endpoint: e.name, buttons: [RENAME, REMOVE],
        description: e.baseUrl, ...(e.current ? { detail: `the model ${model} is on this endpoint` } : {}),
      })),
      { label: '$(add) Add an endpoint…', alwaysShow: true },
    ];
    qp.onDidTriggerItemButton((ev) => {
      if (ev.item.endpoint) done({ action: ev.button === RENAME ? 'rename' : 'remove', endpoint: ev.item.endpoint });
    });
    qp.onDidAccept(() => {
      const row = qp.selectedItems[0];
      if (!row) return;
      if (!row.endpoint) return done({ action: 'add' });
      const endpoint = row.endpoint;
      settled = true;
      qp.dispose();
      void vscode.window.showQuickPick(ACTIONS, { title: `Vox: endpoint ${endpoint}`, ignoreFocusOut: true }).then(
        (a) => resolve(a ? { action: a.action, endpoint } : undefined),
        () => resolve(undefined),
      );
    });
    qp.onDidHide(() => done(undefined));
    qp.show();
  });
}

/** The flow's questions as VS Code quick picks, input boxes, a modal dialog and notifications. */
export function manageEndpointsUi(): ManageEndpointsUi {
  return {
    pick,
    askName: async (value, check) => (await vscode.window.showInputBox({
      title: `Vox: rename the endpoint ${value}`, prompt: 'A new name for this endpoint, shown with its models (its key moves with it)', value,
      ignoreFocusOut: true, validateInput: (v) => check(v),
    }))?.trim(),
    confirmRemove: async (_endpoint, message) => (await vscode.window.showWarningMessage(message, { modal: true }, 'Remove')) === 'Remove',
    tell: (message) => void vscode.window.showInformationMessage(message),
    failed: (message) => void vscode.window.showErrorMessage(`Vox: ${message}`),
  };
}

/**
 * The HTML of an editor tab's webview page (the compare tab, the Usage tab): one bundle from
 * dist/ (`<name>.js` + `<name>.css`) under a strict CSP — scripts by a per-load nonce only, styles,
 * fonts and images only from the extension's own files.
 */
import * as crypto from 'node:crypto';
import * as vscode from 'vscode';

export function tabPageHtml(webview: vscode.Webview, extensionUri: vscode.Uri, bundle: string, title: string): string {
  const nonce = crypto.randomBytes(18).toString('base64url');
  const js = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'dist', `${bundle}.js`));
  const css = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'dist', `${bundle}.css`));
  const csp = ["default-src 'none'", `img-src ${webview.cspSource} data:`, `style-src ${webview.cspSource}`, `font-src ${webview.cspSource}`, `script-src 'nonce-${nonce}'`].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${css}">
<title>${title}</title>
</head>
<body>
<div id="app"></div>
<script nonce="${nonce}" src="${js}"></script>
</body>
</html>`;
}

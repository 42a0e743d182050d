/**
 * The pages the browser tests load: the same shape the extension host must produce for the chat
 * webview (and the compare tab's, `compareHtml`) (strict CSP: scripts only by nonce, styles and images only from the webview's origin,
 * no inline styles without the nonce), a stand-in for VS Code's theme variables (dark theme), and the fake host
 * injected before any page script: `acquireVsCodeApi()` records posted messages in
 * `window.__posted` and keeps `setState` in `window.__state` (and sessionStorage, so it survives
 * a reload as VS Code's webview state does); alerts and CSP violations are
 * recorded too, so tests can prove model output stays inert.
 */

/** The webview HTML for `origin` (what `webview.cspSource` would be) and a per-load `nonce`. */
export function webviewHtml(origin: string, nonce: string): string {
  const csp = [
    "default-src 'none'",
    `script-src 'nonce-${nonce}' ${origin}`, // as chat-view.ts: the bundle by nonce, its lazy chunks from the origin
    `style-src ${origin} 'nonce-${nonce}'`, // as chat-view.ts: an MCP App's srcdoc frame inherits this policy; its <style> tags get the nonce
    `img-src ${origin} data:`,
    `font-src ${origin}`,
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="${origin}/theme.css">
<link rel="stylesheet" href="${origin}/dist/webview.css">
<title>Vox</title>
</head>
<body class="vscode-dark">
<div id="app"></div>
<script type="module" nonce="${nonce}" src="${origin}/dist/webview.js"></script>
</body>
</html>`;
}

/**
 * The compare tab's page as src/extension/compare/compare-panel.ts builds it (its CSP: the script
 * by nonce only, styles from the webview's origin), with the same theme stand-in as the chat.
 */
export function compareHtml(origin: string, nonce: string, entry: 'compare' | 'usage' = 'compare'): string {
  const csp = ["default-src 'none'", `img-src ${origin} data:`, `style-src ${origin}`, `font-src ${origin}`, `script-src 'nonce-${nonce}'`].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${origin}/theme.css">
<link rel="stylesheet" href="${origin}/dist/${entry}.css">
<title>${entry === 'compare' ? 'Compare branches' : 'Vox: Usage'}</title>
</head>
<body class="vscode-dark">
<div id="app"></div>
<script nonce="${nonce}" src="${origin}/dist/${entry}.js"></script>
</body>
</html>`;
}

/** Runs before the bundle (Playwright init script; not subject to the page's CSP). */
export const FAKE_HOST_SCRIPT = `
window.__posted = [];
// VS Code keeps setState across webview reloads; sessionStorage does the same across page reloads.
window.__state = JSON.parse(sessionStorage.getItem('vox-test-state') ?? 'null') ?? undefined;
window.__alerts = [];
window.__violations = [];
window.alert = (m) => { window.__alerts.push(String(m)); };
document.addEventListener('securitypolicyviolation', (e) => {
  window.__violations.push(e.violatedDirective + ' ' + e.blockedURI + ' ' + (e.sourceFile || '') + ':' + e.lineNumber);
});
let acquired = false;
window.acquireVsCodeApi = () => {
  if (acquired) throw new Error('acquireVsCodeApi may be called only once');
  acquired = true;
  return {
    postMessage: (m) => { window.__posted.push(JSON.parse(JSON.stringify(m))); },
    getState: () => window.__state,
    setState: (s) => {
      window.__state = JSON.parse(JSON.stringify(s));
      sessionStorage.setItem('vox-test-state', JSON.stringify(s));
    },
  };
};
`;

/** A subset of VS Code's Dark Modern theme variables, as the webview host injects them. */
export const THEME_CSS = `
html {
  --vscode-font-family: system-ui, -apple-system, "Segoe UI", "Ubuntu", sans-serif;
  --vscode-font-size: 13px;
  --vscode-font-weight: normal;
  --vscode-editor-font-family: "DejaVu Sans Mono", monospace;
  --vscode-editor-font-size: 12px;
  --vscode-foreground: #cccccc;
  --vscode-descriptionForeground: #9d9d9d;
  --vscode-charts-blue: #3794ff;
  --vscode-charts-green: #89d185;
  --vscode-errorForeground: #f85149;
  --vscode-focusBorder: #0078d4;
  --vscode-editor-background: #1f1f1f;
  --vscode-sideBar-background: #181818;
  --vscode-panel-border: #2b2b2b;
  --vscode-widget-border: #313131;
  --vscode-editorWidget-background: #202020;
  --vscode-button-background: #0078d4;
  --vscode-button-foreground: #ffffff;
  --vscode-button-hoverBackground: #026ec1;
  --vscode-button-border: #ffffff12;
  --vscode-button-secondaryBackground: #313131;
  --vscode-button-secondaryForeground: #cccccc;
  --vscode-button-secondaryHoverBackground: #3c3c3c;
  --vscode-input-background: #313131;
  --vscode-input-foreground: #cccccc;
  --vscode-input-border: #3c3c3c;
  --vscode-input-placeholderForeground: #989898;
  --vscode-dropdown-background: #313131;
  --vscode-dropdown-foreground: #cccccc;
  --vscode-dropdown-border: #3c3c3c;
  --vscode-badge-background: #616161;
  --vscode-badge-foreground: #f8f8f8;
  --vscode-textLink-foreground: #4daafc;
  --vscode-textLink-activeForeground: #4daafc;
  --vscode-textCodeBlock-background: #2b2b2b;
  --vscode-textBlockQuote-background: #2b2b2b;
  --vscode-textBlockQuote-border: #616161;
  --vscode-list-hoverBackground: #2a2d2e;
  --vscode-list-inactiveSelectionBackground: #37373d;
  --vscode-toolbar-hoverBackground: #5a5d5e50;
  --vscode-progressBar-background: #0078d4;
  --vscode-inputValidation-errorBackground: #5a1d1d;
  --vscode-inputValidation-errorBorder: #be1100;
  --vscode-inputValidation-warningBackground: #352a05;
  --vscode-editorWarning-foreground: #cca700;
  --vscode-symbolIcon-keywordForeground: #569cd6;
  --vscode-debugTokenExpression-string: #ce9178;
  --vscode-debugTokenExpression-number: #b5cea8;
  --vscode-debugTokenExpression-boolean: #4e94ce;
  --vscode-editorCursor-foreground: #aeafad;
  color-scheme: dark;
}
`;

/** A subset of VS Code's Light Modern theme variables (body class `vscode-light`): contrast is checked in both. */
export const LIGHT_THEME_CSS = `
html {
  --vscode-font-family: system-ui, -apple-system, "Segoe UI", "Ubuntu", sans-serif;
  --vscode-font-size: 13px;
  --vscode-font-weight: normal;
  --vscode-editor-font-family: "DejaVu Sans Mono", monospace;
  --vscode-editor-font-size: 12px;
  --vscode-foreground: #3b3b3b;
  --vscode-descriptionForeground: #3b3b3b;
  --vscode-errorForeground: #f85149;
  --vscode-focusBorder: #005fb8;
  --vscode-editor-background: #ffffff;
  --vscode-sideBar-background: #f8f8f8;
  --vscode-panel-border: #e5e5e5;
  --vscode-widget-border: #e5e5e5;
  --vscode-editorWidget-background: #f8f8f8;
  --vscode-button-background: #005fb8;
  --vscode-button-foreground: #ffffff;
  --vscode-button-hoverBackground: #0258a8;
  --vscode-button-border: #0000001a;
  --vscode-button-secondaryBackground: #e5e5e5;
  --vscode-button-secondaryForeground: #3b3b3b;
  --vscode-button-secondaryHoverBackground: #cccccc;
  --vscode-input-background: #ffffff;
  --vscode-input-foreground: #3b3b3b;
  --vscode-input-border: #cecece;
  --vscode-input-placeholderForeground: #767676;
  --vscode-dropdown-background: #ffffff;
  --vscode-dropdown-foreground: #3b3b3b;
  --vscode-dropdown-border: #cecece;
  --vscode-badge-background: #cccccc;
  --vscode-badge-foreground: #3b3b3b;
  --vscode-textLink-foreground: #005fb8;
  --vscode-textLink-activeForeground: #005fb8;
  --vscode-textCodeBlock-background: #dcdcdc66;
  --vscode-textBlockQuote-background: #f8f8f8;
  --vscode-textBlockQuote-border: #e5e5e5;
  --vscode-list-hoverBackground: #f2f2f2;
  --vscode-list-inactiveSelectionBackground: #e4e6f1;
  --vscode-toolbar-hoverBackground: #b8b8b850;
  --vscode-progressBar-background: #005fb8;
  --vscode-inputValidation-errorBackground: #f2dede;
  --vscode-inputValidation-errorBorder: #be1100;
  --vscode-inputValidation-warningBackground: #f6f5d2;
  --vscode-editorWarning-foreground: #bf8803;
  --vscode-symbolIcon-keywordForeground: #af00db;
  --vscode-debugTokenExpression-string: #a31515;
  --vscode-debugTokenExpression-number: #098658;
  --vscode-debugTokenExpression-boolean: #0000ff;
  --vscode-editorCursor-foreground: #000000;
  color-scheme: light;
}
`;

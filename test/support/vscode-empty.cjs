// The `vscode` module as test/support/vscode-absent.ts gives it: nothing in it.
module.exports = Object.freeze({});

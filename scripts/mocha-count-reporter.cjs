// Mocha reporter: the usual spec output, plus the pass/fail counts (and the titles of the failed
// tests, so the closing summary can name them) written as JSON to $VOX_TEST_COUNTS_FILE for
// scripts/test-all.mjs, which sums every suite into one closing line.
const fs = require('node:fs');
const Mocha = require('mocha');

class CountReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    const failures = [];
    runner.on(Mocha.Runner.constants.EVENT_TEST_FAIL, (test, err) => {
      const where = test.file ? ` (${require('node:path').relative(process.cwd(), test.file)})` : '';
      failures.push(`${test.fullTitle()}${where}: ${String((err && err.message) || err).split('\n')[0].slice(0, 300)}`);
    });
    runner.once(Mocha.Runner.constants.EVENT_RUN_END, () => {
      const file = process.env.VOX_TEST_COUNTS_FILE;
      if (!file) return;
      const s = this.stats;
      fs.writeFileSync(file, JSON.stringify({ passed: s.passes, failed: s.failures, skipped: s.pending, failures }));
    });
  }
}
module.exports = CountReporter;

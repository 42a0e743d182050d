// Mocha reporter: the usual spec output, plus the pass/fail counts written as JSON to
// $VOX_TEST_COUNTS_FILE so scripts/test-all.mjs can sum every suite into one closing line.
const fs = require('node:fs');
const Mocha = require('mocha');

class CountReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    runner.once(Mocha.Runner.constants.EVENT_RUN_END, () => {
      const file = process.env.VOX_TEST_COUNTS_FILE;
      if (!file) return;
      const s = this.stats;
      fs.writeFileSync(file, JSON.stringify({ passed: s.passes, failed: s.failures, skipped: s.pending }));
    });
  }
}
module.exports = CountReporter;

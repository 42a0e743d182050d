/**
 * detectFalseToolRefusal (SPEC 3.2): the seed's two patterns, the 700-character length bound and
 * the 350-character window, exactly at their edges, and the preconditions (tools offered, no
 * call assembled).
 */
import { strict as assert } from 'node:assert';
import {
  CAPABILITY_RE, detectFalseToolRefusal, REFUSAL_MAX_CONTENT_CHARS, REFUSAL_RE, REFUSAL_WINDOW_CHARS,
} from '../../../src/engine/salvage/false-refusal';

const withTools = { toolsAvailable: true, toolCallsAssembled: 0 };
const REFUSAL = "I can't run commands in your terminal.";

/** `body` padded with neutral words to exactly `n` characters. */
function padTo(body: string, n: number): string {
  assert.ok(body.length <= n);
  return body + ' lorem'.repeat(Math.ceil((n - body.length) / 6)).slice(0, n - body.length);
}

describe('detectFalseToolRefusal', () => {
  it('restates the seed patterns (case-insensitive, word-bounded)', () => {
    assert.equal(REFUSAL_RE.flags.includes('i'), true);
    assert.equal(CAPABILITY_RE.flags.includes('i'), true);
    assert.equal(REFUSAL_MAX_CONTENT_CHARS, 700);
    assert.equal(REFUSAL_WINDOW_CHARS, 350);
    for (const phrase of ["can't", 'cannot', 'can not', "don't have", 'do not have', 'unable to', 'not able to', 'no access', 'without access', "can't actually", 'cannot actually']) {
      assert.equal(detectFalseToolRefusal(`Sorry, I ${phrase} use a shell here.`, withTools), true, phrase);
    }
    for (const cap of ['tool', 'terminal', 'shell', 'command', 'run', 'execute', 'file', 'filesystem', 'browse', 'browser', 'web search', 'search', 'calendar', 'schedule', 'environment']) {
      assert.equal(detectFalseToolRefusal(`Unfortunately I CANNOT ${cap} that.`, withTools), true, cap);
    }
  });

  it('capability words match in the plural too ("files", "commands", "tools", "searches")', () => {
    for (const w of ['files', 'commands', 'tools', 'searches', 'shells', 'executes']) {
      assert.equal(detectFalseToolRefusal(`I cannot touch ${w} here.`, withTools), true, w);
    }
    assert.equal(detectFalseToolRefusal('I cannot do filesx.', withTools), false);
  });

  it('needs both patterns', () => {
    assert.equal(detectFalseToolRefusal('I cannot agree with that design.', withTools), false, 'a refusal without a capability');
    assert.equal(detectFalseToolRefusal('I will run the tests now.', withTools), false, 'a capability without a refusal');
    assert.equal(detectFalseToolRefusal('The file is fine and the shell script runs.', withTools), false);
  });

  it('matches whole words only: "running" is not "run", "cannotation" is not "cannot"', () => {
    assert.equal(detectFalseToolRefusal('I cannot be running late.', withTools), false);
    assert.equal(detectFalseToolRefusal('The cannotation of files is odd.', withTools), false);
  });

  it('takes the typographic apostrophe as a straight one', () => {
    assert.equal(detectFalseToolRefusal('I can’t access the filesystem from here.', withTools), true);
  });

  it('length: 699 characters are inspected, 700 and 701 are not', () => {
    for (const [n, expected] of [[699, true], [700, false], [701, false]] as const) {
      const text = padTo(REFUSAL, n);
      assert.equal(text.length, n);
      assert.equal(detectFalseToolRefusal(text, withTools), expected, `${n} chars`);
    }
  });

  it('window: a refusal starting at character 349 counts, at 350 or 351 it does not', () => {
    for (const [at, expected] of [[349, true], [350, false], [351, false]] as const) {
      // The capability word is early; only the refusal phrase moves.
      const text = padTo(padTo('Use the terminal.', at - 1) + ' cannot do it.', 600);
      assert.equal(text.indexOf('cannot'), at);
      assert.equal(detectFalseToolRefusal(text, withTools), expected, `refusal at ${at}`);
    }
    for (const [at, expected] of [[349, true], [351, false]] as const) {
      const text = padTo(padTo('I cannot.', at - 1) + ' shell access.', 600);
      assert.equal(text.indexOf('shell'), at);
      assert.equal(detectFalseToolRefusal(text, withTools), expected, `capability at ${at}`);
    }
  });

  it('a refusal well past the window does not count, however early the capability word is', () => {
    const text = padTo(padTo('Use the terminal.', 399) + ' cannot', 500);
    assert.equal(detectFalseToolRefusal(text, withTools), false);
  });

  it('never fires without tools or when a tool call was assembled', () => {
    assert.equal(detectFalseToolRefusal(REFUSAL, withTools), true);
    assert.equal(detectFalseToolRefusal(REFUSAL, { toolsAvailable: false, toolCallsAssembled: 0 }), false);
    assert.equal(detectFalseToolRefusal(REFUSAL, { toolsAvailable: true, toolCallsAssembled: 1 }), false);
  });

  it('is stateless across calls (the global regexes keep no lastIndex)', () => {
    for (let i = 0; i < 5; i++) assert.equal(detectFalseToolRefusal(REFUSAL, withTools), true);
  });
});

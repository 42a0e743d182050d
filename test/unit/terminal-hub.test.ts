/**
 * CommandOutputHub: the same output cut into chunks at every byte position streams to the same
 * final result (and a subscriber that applies every update sees what the terminal shows), the
 * bounds (TERMINAL_OUTPUT_TAIL_CHARS, MAX_BYTES_PER_STREAM, LIVE_LINES, MAX_LIVE_COMMANDS with
 * its LRU order), and what subscribers get: a reset first, then small updates, the final text.
 */
import * as assert from 'node:assert/strict';
import { applyUpdate, CommandOutputHub, emptyView, MAX_BYTES_PER_STREAM, MAX_LIVE_COMMANDS, type CommandOutputEvent, type CommandOutputView } from '../../src/engine/terminal/hub';
import { LIVE_LINES, normalizeTerminalOutput, TERMINAL_OUTPUT_TAIL_CHARS } from '../../src/engine/terminal/normalize';
import { utf8Length } from '../../src/engine/terminal/tail';
import { Rng } from '../support/random';
import { recordings, xtermText } from '../fixtures/terminal/oracle';

const ESC = '\x1b';

/** Text a view shows: frozen then live lines, trailing empty lines dropped. */
function viewText(v: CommandOutputView): string {
  const lines = v.frozen.concat(v.live);
  while (lines.length && lines[lines.length - 1] === '') lines.pop();
  return lines.join('\n');
}

/** Streams `chunks` through a hub with a subscriber; returns the final result and the subscriber's view. */
function run(chunks: (string | Uint8Array)[], colors: 'keep' | 'strip' = 'strip') {
  const hub = new CommandOutputHub();
  hub.start('c');
  const view = emptyView();
  const events: CommandOutputEvent[] = [];
  hub.subscribe('c', (e) => {
    events.push(e);
    if (e.type === 'update') applyUpdate(view, e);
  }, { colors });
  for (const c of chunks) hub.append('c', c);
  const result = hub.end('c', 0)!;
  return { result, view, events };
}

describe('CommandOutputHub: chunks cut at every byte position', () => {
  for (const rec of recordings()) {
    it(`${rec.name}: every two-chunk cut, and one byte per chunk, give the terminal's text`, async () => {
      const expected = await xtermText(rec.bytes);
      const whole = run([rec.bytes]);
      assert.equal(whole.result.text, expected);
      assert.equal(viewText(whole.view), expected);
      // Every byte position as the cut between two chunks (escape sequences and UTF-8 split anywhere).
      const hub = new CommandOutputHub();
      for (let k = 0; k <= rec.bytes.length; k++) {
        hub.start('c');
        hub.append('c', rec.bytes.subarray(0, k));
        hub.append('c', rec.bytes.subarray(k));
        const r = hub.end('c')!;
        assert.equal(r.text, expected, `cut at byte ${k}`);
        assert.equal(r.styledText, whole.result.styledText, `styled, cut at byte ${k}`);
      }
      // Every byte position a cut at once, with a subscriber applying each update.
      const bytewise = run(Array.from(rec.bytes, (b) => Uint8Array.of(b)), 'keep');
      assert.equal(bytewise.result.text, expected);
      assert.equal(viewText(bytewise.view), whole.result.styledText);
      assert.equal(bytewise.events.at(-1)?.type, 'ended');
    });
  }

  it('random chunkings of generated redraws (strings with surrogate pairs split) agree, and so do the views', () => {
    const rng = new Rng(0x7e57);
    let input = '';
    for (let i = 0; i < 400; i++) {
      input += rng.pick([`\r[${'#'.repeat(rng.int(30))}] ${rng.int(100)}% 🚀`, `${ESC}[2A${ESC}[2K\rlayer ${rng.int(9)}: 下载 ${rng.int(100)}%\r${ESC}[2B`, '\n', `${ESC}[1;3${rng.int(8)}mok${ESC}[0m\n`, `⠙${ESC}[1G${ESC}[0K`]);
    }
    const expected = normalizeTerminalOutput(input);
    for (let trial = 0; trial < 20; trial++) {
      const chunks: string[] = [];
      for (let at = 0; at < input.length; ) {
        const len = 1 + rng.int(40);
        chunks.push(input.slice(at, at + len));
        at += len;
      }
      const { result, view } = run(chunks);
      assert.equal(result.text, expected, `trial ${trial}`);
      assert.equal(viewText(view), expected, `view, trial ${trial}`);
    }
  });
});

describe('CommandOutputHub: subscribers', () => {
  it('a progress bar redraw is an update of its one line; frozen lines are sent once', () => {
    const hub = new CommandOutputHub();
    hub.start('c');
    const updates: Extract<CommandOutputEvent, { type: 'update' }>[] = [];
    hub.subscribe('c', (e) => e.type === 'update' && updates.push(e), { colors: 'strip' });
    assert.equal(updates.length, 1);
    assert.equal(updates[0]!.reset, true);
    hub.append('c', 'step 1\nstep 2\n');
    for (let p = 0; p <= 100; p += 10) hub.append('c', `\r[${'#'.repeat(p / 10)}${' '.repeat(10 - p / 10)}] ${p}%`);
    const redraws = updates.slice(2);
    assert.equal(redraws.length, 11);
    for (const u of redraws) {
      assert.equal(u.liveFrom, 2);
      assert.equal(u.live.length, 1);
      assert.deepEqual(u.frozen, []);
    }
    assert.deepEqual(updates.at(-1)!.live, ['[##########] 100%']);
    hub.append('c', '\r'); // changes nothing on screen: no update
    assert.equal(updates.length, 13);
    // Lines that scroll out of the LIVE_LINES region are frozen and sent once, in order.
    const view = updates.reduce((v, u) => applyUpdate(v, u), emptyView());
    for (let i = 0; i < 3 * LIVE_LINES; i++) hub.append('c', `\nline ${i}`);
    for (const u of updates.slice(13)) applyUpdate(view, u);
    const frozen = updates.slice(13).flatMap((u) => u.frozen);
    assert.equal(frozen.length, 3 + 3 * LIVE_LINES - LIVE_LINES);
    assert.deepEqual(frozen.slice(0, 4), ['step 1', 'step 2', '[##########] 100%', 'line 0']);
    assert.equal(view.live.length, LIVE_LINES);
    assert.equal(viewText(view), hub.text('c'));
  });

  it('a late subscriber gets everything kept at once, then the final text; an ended stream answers at once', () => {
    const hub = new CommandOutputHub();
    hub.start('c');
    hub.append('c', `${ESC}[32mgreen${ESC}[0m\n50%\r100%`);
    const events: CommandOutputEvent[] = [];
    const unsubscribe = hub.subscribe('c', (e) => events.push(e))!;
    assert.equal(events.length, 1);
    const first = events[0]!;
    assert.ok(first.type === 'update' && first.reset);
    assert.deepEqual(first.live, [`${ESC}[0;32mgreen${ESC}[0m`, '100%']);
    const result = hub.end('c', 3)!;
    assert.equal(result.text, 'green\n100%');
    assert.deepEqual(events.at(-1), { type: 'ended', commandId: 'c', seq: 2, text: `${ESC}[0;32mgreen${ESC}[0m\n100%`, exitCode: 3 });
    unsubscribe();
    const late: CommandOutputEvent[] = [];
    hub.subscribe('c', (e) => late.push(e), { colors: 'strip' });
    assert.deepEqual(late.map((e) => e.type), ['update', 'ended']);
    assert.equal(late[1]!.type === 'ended' && late[1]!.text, 'green\n100%');
    assert.equal(hub.append('c', 'more'), false, 'an ended stream takes no more output');
    assert.equal(hub.end('c'), undefined);
  });

  it('unsubscribing stops updates; a throwing subscriber does not stop the others', () => {
    const hub = new CommandOutputHub();
    hub.start('c');
    let a = 0;
    let b = 0;
    const offA = hub.subscribe('c', () => a++)!;
    hub.subscribe('c', () => {
      b++;
      throw new Error('view crashed');
    });
    hub.append('c', 'x');
    offA();
    hub.append('c', 'y');
    assert.equal(a, 2);
    assert.equal(b, 3);
    assert.equal(hub.end('c')!.text, 'xy');
  });
});

describe('CommandOutputHub: bounds', () => {
  it(`MAX_LIVE_COMMANDS (${MAX_LIVE_COMMANDS}) streams, least recently active first out, ended before running`, () => {
    const hub = new CommandOutputHub();
    for (let i = 0; i < MAX_LIVE_COMMANDS; i++) hub.start(`c${i}`);
    hub.append('c0', 'still busy'); // c0 is now the most recently active
    hub.end('c5');
    const told: CommandOutputEvent[] = [];
    hub.subscribe('c1', (e) => told.push(e));
    hub.start('new1'); // evicts the ended c5, though c1… are older
    assert.equal(hub.size, MAX_LIVE_COMMANDS);
    assert.equal(hub.has('c5'), false);
    hub.start('new2'); // then the least recently active running one: c2 (c1 was subscribed to, c0 appended to)
    assert.equal(hub.has('c2'), false);
    assert.ok(hub.has('c0') && hub.has('c1') && hub.has('new1') && hub.has('new2'));
    for (let i = 0; i < 70; i++) hub.start(`more${i}`);
    assert.equal(hub.size, MAX_LIVE_COMMANDS);
    assert.equal(told.at(-1)?.type, 'evicted');
    assert.equal(hub.append('c1', 'x'), false);
    // Starting a command under an id in use replaces that stream; its subscribers are told.
    const replaced: CommandOutputEvent[] = [];
    hub.subscribe('more69', (e) => replaced.push(e));
    hub.start('more69');
    assert.deepEqual(replaced.map((e) => e.type), ['update', 'evicted']);
    assert.equal(hub.text('more69'), '');
  });

  it(`the final texts stay within TERMINAL_OUTPUT_TAIL_CHARS characters and MAX_BYTES_PER_STREAM (${MAX_BYTES_PER_STREAM}) bytes`, () => {
    const hub = new CommandOutputHub();
    hub.start('big');
    const view = emptyView();
    hub.subscribe('big', (e) => e.type === 'update' && applyUpdate(view, e));
    for (let i = 0; i < 30_000; i++) hub.append('big', `${ESC}[1;3${i % 8}m下载 ${i} ✅${ESC}[0m ${'.'.repeat(i % 50)}\r\n`);
    const r = hub.end('big')!;
    assert.ok(r.text.length <= TERMINAL_OUTPUT_TAIL_CHARS, `${r.text.length} chars`);
    assert.ok(utf8Length(r.styledText) <= MAX_BYTES_PER_STREAM, `${utf8Length(r.styledText)} bytes`);
    assert.match(r.text, /^\[terminal: \d+ earlier lines cut \(\d+ characters\)\]\n/);
    assert.match(r.styledText, /^\[terminal: \d+ earlier lines cut \(\d+ bytes\)\]\n/);
    assert.match(r.text, /下载 29999 ✅ \.+$/);
    // The view keeps only what the hub keeps: its frozen lines are bounded too.
    assert.ok(utf8Length(view.frozen.join('\n')) <= MAX_BYTES_PER_STREAM);
    assert.equal(view.frozen.at(-1), r.styledText.split('\n').at(-LIVE_LINES));
  });

  it('a program that clears its scrollback (ED 3) makes views drop their frozen lines', () => {
    const hub = new CommandOutputHub();
    hub.start('c');
    const view = emptyView();
    hub.subscribe('c', (e) => e.type === 'update' && applyUpdate(view, e), { colors: 'strip' });
    for (let i = 0; i < 100; i++) hub.append('c', `line ${i}\n`);
    assert.equal(view.frozen.length, 100 + 1 - LIVE_LINES);
    hub.append('c', `${ESC}[H${ESC}[2J${ESC}[3Jfresh`);
    assert.deepEqual(view.frozen, []);
    assert.equal(viewText(view), 'fresh');
    assert.equal(hub.end('c')!.text, 'fresh');
  });
});

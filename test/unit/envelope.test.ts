/**
 * Tests for src/protocol/wire/envelope.ts and validators.ts: known / unknown variants, typed errors
 * with paths, byte-exact re-encoding of unknown variants, and validator type inference (checked
 * by `tsc`; the `Expect<Equal<…>>` lines fail to compile if inference regresses).
 */
import assert from 'node:assert/strict';
import { EnvelopeError, ForwardCompatibleEnvelope, forwardCompatible } from '../../src/protocol/wire/envelope';
import {
  ValidationError,
  arrayOf,
  bool,
  formatPath,
  int,
  literal,
  nullable,
  num,
  object,
  oneOf,
  optional,
  refine,
  str,
  unknownValue,
  type Infer,
} from '../../src/protocol/wire/validators';
import { assertThrowsCode } from '../support/assert-code';

type Equal<A, B> = (<G>() => G extends A ? 1 : 2) extends <G>() => G extends B ? 1 : 2 ? true : false;
type Expect<T extends true> = T;

const chat = object({
  type: literal('chat'),
  text: str,
  tags: optional(arrayOf(str)),
  author: nullable(object({ name: str, guest: bool })),
});
const progress = object({
  type: literal('progress'),
  runId: str,
  done: int,
  ratio: num,
  phase: literal('queued', 'running'),
  detail: oneOf(str, int),
  extra: optional(unknownValue),
});

const nullableInts = arrayOf(nullable(int));

// Type inference: these lines are compile-time assertions.
export type ChecksInference = [
  Expect<
    Equal<
      Infer<typeof chat>,
      { type: 'chat'; text: string; author: { name: string; guest: boolean } | null; tags?: string[] | undefined }
    >
  >,
  Expect<Equal<Infer<typeof progress>['phase'], 'queued' | 'running'>>,
  Expect<Equal<Infer<typeof progress>['detail'], string | number>>,
  Expect<Equal<Infer<typeof nullableInts>, (number | null)[]>>,
];

const envelope = forwardCompatible({ chat, progress });

describe('ForwardCompatibleEnvelope', () => {
  it('decodes known variants to typed values, dropping undeclared fields', () => {
    const d = envelope.decode({ type: 'chat', text: 'hi', author: null, addedLater: 1 });
    assert.deepEqual(d, { kind: 'known', type: 'chat', value: { type: 'chat', text: 'hi', author: null } });
    if (d.kind === 'known' && d.value.type === 'chat') {
      const text: string = d.value.text; // narrowing on the tag works
      assert.equal(text, 'hi');
    }
    const p = envelope.decode('{"type":"progress","runId":"r","done":3,"ratio":0.5,"phase":"running","detail":7}');
    assert.equal(p.kind, 'known');
    assert.equal(envelope.encode(p), '{"type":"progress","runId":"r","done":3,"ratio":0.5,"phase":"running","detail":7}');
    assert.deepEqual(envelope.knownTypes, ['chat', 'progress']);
    assert.ok(envelope.isKnown('chat'));
    assert.ok(!envelope.isKnown('toString'));
  });

  it('keeps unknown variants with their raw payload and re-encodes them unchanged', () => {
    const raw = { type: 'terminal.resized', cols: 80, nested: { a: [1, 'x', null] } };
    const d = envelope.decode(raw);
    assert.equal(d.kind, 'unknown');
    assert.equal(d.type, 'terminal.resized');
    if (d.kind !== 'unknown') return;
    assert.deepEqual(d.raw, raw);
    assert.equal(envelope.encode(d), JSON.stringify(raw));

    // As text: the exact bytes survive, including whitespace and integers beyond 2^53.
    const text = '{ "type": "future.event",\n  "big": 12345678901234567890123, "s": "\\u00e9😀" }';
    const t = envelope.decode(text);
    assert.equal(t.kind, 'unknown');
    assert.equal(envelope.encode(t), text);
    // Names on Object.prototype are not variants.
    assert.equal(envelope.decode({ type: 'toString' }).kind, 'unknown');
    assert.equal(envelope.decode('{"type":"__proto__","x":1}').kind, 'unknown');
  });

  it('reports a broken known variant as invalidPayload with the variant and path', () => {
    let e = assertThrowsCode(() => envelope.decode({ type: 'chat', text: 5, author: null }), 'protocol/invalidPayload', EnvelopeError);
    assert.equal(e.variant, 'chat');
    assert.equal(e.path, '$.text');
    assert.match(e.message, /\$\.text: expected string, got number/);
    assert.ok(e.cause instanceof ValidationError);

    e = assertThrowsCode(() => envelope.decode({ type: 'chat', text: 'x', tags: ['a', 2], author: null }), 'protocol/invalidPayload', EnvelopeError);
    assert.equal(e.path, '$.tags[1]');
    e = assertThrowsCode(() => envelope.decode({ type: 'chat', text: 'x', author: { name: 'n' } }), 'protocol/invalidPayload', EnvelopeError);
    assert.equal(e.path, '$.author.guest');
    e = assertThrowsCode(() => envelope.decode({ type: 'chat', text: 'x' }), 'protocol/invalidPayload', EnvelopeError);
    assert.equal(e.path, '$.author');
    e = assertThrowsCode(
      () => envelope.decode({ type: 'progress', runId: 'r', done: 1.5, ratio: 1, phase: 'running', detail: 'd' }),
      'protocol/invalidPayload',
      EnvelopeError,
    );
    assert.equal(e.path, '$.done');
    e = assertThrowsCode(
      () => envelope.decode({ type: 'progress', runId: 'r', done: 1, ratio: 1, phase: 'paused', detail: 'd' }),
      'protocol/invalidPayload',
      EnvelopeError,
    );
    assert.match(e.message, /expected "queued" \| "running", got string/);

    // A decoder that throws something other than ValidationError still gives invalidPayload.
    const custom = new ForwardCompatibleEnvelope<number>({
      n: () => {
        throw new Error('nope');
      },
    });
    assert.throws(
      () => custom.decode({ type: 'n' }),
      (err: unknown) => err instanceof EnvelopeError && err.code === 'invalidPayload' && err.path === '$',
    );
  });

  it('rejects garbage with typed errors', () => {
    assertThrowsCode(() => envelope.decode(null), 'protocol/notAnObject', EnvelopeError);
    assertThrowsCode(() => envelope.decode([{ type: 'chat' }]), 'protocol/notAnObject', EnvelopeError);
    assertThrowsCode(() => envelope.decode(42), 'protocol/notAnObject', EnvelopeError);
    assertThrowsCode(() => envelope.decode(undefined), 'protocol/notAnObject', EnvelopeError);
    assertThrowsCode(() => envelope.decode('null'), 'protocol/notAnObject', EnvelopeError);
    assertThrowsCode(() => envelope.decode('"chat"'), 'protocol/notAnObject', EnvelopeError);
    assertThrowsCode(() => envelope.decode('{"type": "chat",'), 'protocol/invalidJson', EnvelopeError);
    assertThrowsCode(() => envelope.decode(''), 'protocol/invalidJson', EnvelopeError);
    assertThrowsCode(() => envelope.decode(`{${'x'.repeat(79)}😀`), 'protocol/invalidJson', EnvelopeError);
    assertThrowsCode(() => envelope.decode({ text: 'no type' }), 'protocol/missingType', EnvelopeError);
    assertThrowsCode(() => envelope.decode({ type: 7 }), 'protocol/missingType', EnvelopeError);
    assertThrowsCode(() => envelope.decode({ type: '' }), 'protocol/missingType', EnvelopeError);
    assertThrowsCode(() => envelope.decode(Object.create({ type: 'chat' })), 'protocol/missingType', EnvelopeError); // inherited type is not a type

    const r = envelope.tryDecode('nope');
    assert.equal(r.ok, false);
    if (!r.ok) assert.equal(r.error.code, 'invalidJson');
    const ok = envelope.tryDecode({ type: 'other' });
    assert.ok(ok.ok && ok.message.kind === 'unknown');
  });
});

describe('validators', () => {
  it('accept and reject the right values', () => {
    assert.equal(str('a'), 'a');
    assert.throws(() => str(1), ValidationError);
    assert.equal(num(1.5), 1.5);
    assert.throws(() => num(Number.NaN), /expected finite number, got NaN/);
    assert.throws(() => num(Infinity), ValidationError);
    assert.equal(int(-3), -3);
    assert.throws(() => int(2 ** 53), ValidationError);
    assert.equal(bool(false), false);
    assert.throws(() => bool('true'), ValidationError);
    assert.equal(literal(null)(null), null);
    assert.deepEqual(nullableInts([1, null]), [1, null]);
    assert.throws(() => nullableInts([1, 'x']), /\$\[1\]: expected safe integer \| null, got string/);
    assert.equal(optional(str)(undefined), undefined);
    assert.throws(() => optional(str)(null), ValidationError);
    assert.equal(oneOf(int, literal('auto'))('auto'), 'auto');
    assert.throws(() => oneOf(int, literal('auto'))('x'), /expected safe integer \| "auto", got string/);
    const short = refine(str, (s) => s.length <= 3, 'at most 3 characters');
    assert.equal(short('abc'), 'abc');
    assert.throws(() => short('abcd'), /expected string \(at most 3 characters\)/);
  });

  it('object reads own properties only and keeps a __proto__ key as data', () => {
    const v = object({ toString: optional(str), ['__proto__']: optional(str) });
    assert.deepEqual(v({}), {});
    const parsed = v(JSON.parse('{"__proto__":"x"}'));
    assert.equal(Object.getPrototypeOf(parsed), Object.prototype);
    assert.equal(Object.getOwnPropertyDescriptor(parsed, '__proto__')?.value, 'x');
    assert.throws(() => object({})([]), /expected object \{\}, got array/);
  });

  it('formats paths readably', () => {
    assert.equal(formatPath([]), '$');
    assert.equal(formatPath(['a', 0, 'b c', 'd']), '$.a[0]["b c"].d');
    const deep = object({ rows: arrayOf(object({ 'odd key': int })) });
    assert.throws(
      () => deep({ rows: [{ 'odd key': 1 }, { 'odd key': 'x' }] }),
      (err: unknown) => err instanceof ValidationError && err.pathText === '$.rows[1]["odd key"]',
    );
  });
});

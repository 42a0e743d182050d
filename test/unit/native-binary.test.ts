/** test/support/native-binary.ts: the header checks the packaging test relies on. */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { addonBinding, identifyNative } from '../support/native-binary';

const ROOT = path.resolve(__dirname, '..', '..');

function elf(machine: number): Buffer {
  const b = Buffer.alloc(64);
  b.writeUInt32BE(0x7f454c46, 0);
  b[4] = 2; // 64-bit
  b[5] = 1; // little-endian
  b.writeUInt16LE(machine, 18);
  return b;
}
function macho(cputype: number): Buffer {
  const b = Buffer.alloc(64);
  b.writeUInt32LE(0xfeedfacf, 0);
  b.writeUInt32LE(cputype, 4);
  return b;
}
function pe(machine: number): Buffer {
  const b = Buffer.alloc(256);
  b.write('MZ', 0, 'latin1');
  b.writeUInt32LE(0x80, 0x3c);
  b.writeUInt32BE(0x50450000, 0x80);
  b.writeUInt16LE(machine, 0x84);
  return b;
}

describe('native binary headers', () => {
  it('reads the format and CPU of ELF, Mach-O and PE files', () => {
    assert.deepEqual(identifyNative(elf(62)), { format: 'elf', cpus: ['x64'] });
    assert.deepEqual(identifyNative(elf(183)), { format: 'elf', cpus: ['arm64'] });
    assert.deepEqual(identifyNative(macho(0x01000007)), { format: 'macho', cpus: ['x64'] });
    assert.deepEqual(identifyNative(macho(0x0100000c)), { format: 'macho', cpus: ['arm64'] });
    assert.deepEqual(identifyNative(pe(0x8664)), { format: 'pe', cpus: ['x64'] });
    assert.deepEqual(identifyNative(pe(0xaa64)), { format: 'pe', cpus: ['arm64'] });
    assert.deepEqual(identifyNative(elf(0x28)), { format: 'elf', cpus: ['arm'] });
    assert.deepEqual(identifyNative(elf(0x99)), { format: 'elf', cpus: ['other:0x99'] });
  });

  it('lists every slice of a universal Mach-O, and does not take a Java class file for one', () => {
    const fat = Buffer.alloc(64);
    fat.writeUInt32BE(0xcafebabe, 0);
    fat.writeUInt32BE(2, 4);
    fat.writeUInt32BE(0x01000007, 8);
    fat.writeUInt32BE(0x0100000c, 28);
    assert.deepEqual(identifyNative(fat), { format: 'macho', cpus: ['x64', 'arm64'] });
    const javaClass = Buffer.alloc(64);
    javaClass.writeUInt32BE(0xcafebabe, 0);
    javaClass.writeUInt32BE(0x00000041, 4); // minor 0, major 65
    assert.equal(identifyNative(javaClass), undefined);
  });

  it('is undefined for text, JSON and short files', () => {
    assert.equal(identifyNative(Buffer.from('{"name":"x"}'.padEnd(100))), undefined);
    assert.equal(identifyNative(Buffer.from('MZ')), undefined);
    assert.equal(identifyNative(Buffer.alloc(10)), undefined);
  });

  it("tells an N-API addon from one built for one Node ABI (this machine's builds)", function () {
    const better = path.join(ROOT, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node');
    const napi = path.join(ROOT, 'node_modules', '@photostructure', 'sqlite', 'prebuilds', `${process.platform}-${process.arch}`);
    if (!fs.existsSync(better) || !fs.existsSync(napi)) this.skip();
    assert.equal(addonBinding(fs.readFileSync(better)), 'node-abi');
    const prebuild = fs.readdirSync(napi).find((f) => f.endsWith('.node'))!;
    assert.equal(addonBinding(fs.readFileSync(path.join(napi, prebuild))), 'napi');
    assert.equal(addonBinding(Buffer.from('nothing here')), 'unknown');
  });
});

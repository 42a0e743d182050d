/**
 * Tells what a file's bytes are when they are native code: the container format (ELF, Mach-O,
 * PE) and the CPU types in its header, and for a Node addon whether it is bound to N-API (loads
 * in any Node or Electron) or to one Node ABI (`node_register_module_v<ABI>`: only there).
 */

export type NativeFormat = 'elf' | 'macho' | 'pe';
export type Cpu = 'x64' | 'arm64' | 'x86' | 'arm' | `other:${string}`;

export interface NativeBinary {
  format: NativeFormat;
  /** One CPU, or several for a universal (fat) Mach-O. */
  cpus: Cpu[];
}

const ELF_MACHINES: Record<number, Cpu> = { 3: 'x86', 40: 'arm', 62: 'x64', 183: 'arm64' };
const MACHO_CPUS: Record<number, Cpu> = { 0x7: 'x86', 0x01000007: 'x64', 0xc: 'arm', 0x0100000c: 'arm64' };
const PE_MACHINES: Record<number, Cpu> = { 0x14c: 'x86', 0x8664: 'x64', 0x1c4: 'arm', 0xaa64: 'arm64' };
const cpu = (table: Record<number, Cpu>, n: number): Cpu => table[n] ?? `other:0x${n.toString(16)}`;

/** The native format and CPUs of `buf`, or undefined when it is not an ELF, Mach-O or PE file. */
export function identifyNative(buf: Buffer): NativeBinary | undefined {
  if (buf.length < 64) return undefined;
  // ELF: \x7fELF, EI_DATA at 5 (1 little-endian, 2 big-endian), e_machine at 18.
  if (buf.readUInt32BE(0) === 0x7f454c46) {
    const machine = buf[5] === 2 ? buf.readUInt16BE(18) : buf.readUInt16LE(18);
    return { format: 'elf', cpus: [cpu(ELF_MACHINES, machine)] };
  }
  // Mach-O, thin: 0xfeedface / 0xfeedfacf as written by a little-endian machine; cputype at 4.
  const le = buf.readUInt32LE(0);
  if (le === 0xfeedface || le === 0xfeedfacf) return { format: 'macho', cpus: [cpu(MACHO_CPUS, buf.readUInt32LE(4))] };
  // Mach-O, universal: 0xcafebabe big-endian, nfat_arch, then 20-byte fat_arch records. Java
  // class files share the magic; their next field (a version, >= 45) is no plausible arch count.
  if (buf.readUInt32BE(0) === 0xcafebabe) {
    const n = buf.readUInt32BE(4);
    if (n > 0 && n < 20 && buf.length >= 8 + n * 20) {
      const cpus = Array.from({ length: n }, (_, i) => cpu(MACHO_CPUS, buf.readUInt32BE(8 + i * 20)));
      return { format: 'macho', cpus };
    }
  }
  // PE: "MZ", e_lfanew at 0x3c, "PE\0\0" there, Machine right after it.
  if (buf.readUInt16BE(0) === 0x4d5a) {
    const pe = buf.readUInt32LE(0x3c);
    if (pe + 6 <= buf.length && buf.readUInt32BE(pe) === 0x50450000) return { format: 'pe', cpus: [cpu(PE_MACHINES, buf.readUInt16LE(pe + 4))] };
  }
  return undefined;
}

/**
 * A Node addon's binding: 'napi' (exports napi_register_module_v1), 'node-abi' (registers for
 * one Node ABI version, like a node-gyp build of better-sqlite3), or 'unknown'.
 */
export function addonBinding(buf: Buffer): 'napi' | 'node-abi' | 'unknown' {
  if (buf.includes('node_register_module_v')) return 'node-abi';
  if (buf.includes('napi_register_module_v1')) return 'napi';
  return 'unknown';
}

/**
 * @module A ZIP writer for tests: archives written byte by byte (stored, deflated, data descriptors, ZIP64,
 * comments), so loader tests need no committed binary fixtures. Enough of APPNOTE to test our reader.
 */
import zlib from 'node:zlib';

export interface Member {
  readonly name: string;
  readonly data?: Buffer;
  /** 0 stored, 8 deflated, anything else written as is (with the data stored). */
  readonly method?: number;
  readonly flags?: number;
  /** Sizes and CRC only in a data descriptor after the data; zeros in the local header. */
  readonly dataDescriptor?: boolean;
  /** Write this CRC instead of the true one. */
  readonly crc?: number;
}

export interface ZipOptions {
  /** Saturate the 32-bit fields and write ZIP64 extra fields, EOCD record and locator. */
  readonly zip64?: boolean;
  readonly comment?: string;
}

/** Writes a zip archive the way common archivers do; enough of APPNOTE to test the reader. */
export function makeZip(members: readonly Member[], options: ZipOptions = {}): Buffer {
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  const push = (b: Buffer): void => {
    parts.push(b);
    offset += b.length;
  };
  for (const m of members) {
    const data = m.data ?? Buffer.alloc(0);
    const method = m.method ?? 0;
    const body = method === 8 ? zlib.deflateRawSync(data) : data;
    const crc = m.crc ?? zlib.crc32(data);
    const flags = (m.flags ?? 0) | (m.dataDescriptor === true ? 0x0008 : 0) | 0x0800;
    const name = Buffer.from(m.name, 'utf8');
    const localOffset = offset;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(options.zip64 === true ? 45 : 20, 4);
    local.writeUInt16LE(flags, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt16LE(0x5aa0, 10);
    local.writeUInt16LE(0x598a, 12);
    if (m.dataDescriptor !== true) {
      local.writeUInt32LE(crc, 14);
      local.writeUInt32LE(body.length, 18);
      local.writeUInt32LE(data.length, 22);
    }
    local.writeUInt16LE(name.length, 26);
    push(local);
    push(name);
    push(body);
    if (m.dataDescriptor === true) {
      const dd = Buffer.alloc(16);
      dd.writeUInt32LE(0x08074b50, 0);
      dd.writeUInt32LE(crc, 4);
      dd.writeUInt32LE(body.length, 8);
      dd.writeUInt32LE(data.length, 12);
      push(dd);
    }
    let extra = Buffer.alloc(0);
    if (options.zip64 === true) {
      extra = Buffer.alloc(28);
      extra.writeUInt16LE(0x0001, 0);
      extra.writeUInt16LE(24, 2);
      extra.writeBigUInt64LE(BigInt(data.length), 4);
      extra.writeBigUInt64LE(BigInt(body.length), 12);
      extra.writeBigUInt64LE(BigInt(localOffset), 20);
    }
    const c = Buffer.alloc(46);
    c.writeUInt32LE(0x02014b50, 0);
    c.writeUInt16LE(0x031e, 4);
    c.writeUInt16LE(options.zip64 === true ? 45 : 20, 6);
    c.writeUInt16LE(flags, 8);
    c.writeUInt16LE(method, 10);
    c.writeUInt16LE(0x5aa0, 12);
    c.writeUInt16LE(0x598a, 14);
    c.writeUInt32LE(crc, 16);
    c.writeUInt32LE(options.zip64 === true ? 0xffffffff : body.length, 20);
    c.writeUInt32LE(options.zip64 === true ? 0xffffffff : data.length, 24);
    c.writeUInt16LE(name.length, 28);
    c.writeUInt16LE(extra.length, 30);
    c.writeUInt32LE(options.zip64 === true ? 0xffffffff : localOffset, 42);
    central.push(c, name, extra);
  }
  const cd = Buffer.concat(central);
  const cdOffset = offset;
  push(cd);
  if (options.zip64 === true) {
    const recordOffset = offset;
    const record = Buffer.alloc(56);
    record.writeUInt32LE(0x06064b50, 0);
    record.writeBigUInt64LE(44n, 4);
    record.writeUInt16LE(45, 12);
    record.writeUInt16LE(45, 14);
    record.writeBigUInt64LE(BigInt(members.length), 24);
    record.writeBigUInt64LE(BigInt(members.length), 32);
    record.writeBigUInt64LE(BigInt(cd.length), 40);
    record.writeBigUInt64LE(BigInt(cdOffset), 48);
    push(record);
    const locator = Buffer.alloc(20);
    locator.writeUInt32LE(0x07064b50, 0);
    locator.writeBigUInt64LE(BigInt(recordOffset), 8);
    locator.writeUInt32LE(1, 16);
    push(locator);
  }
  const comment = Buffer.from(options.comment ?? '', 'utf8');
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(0x06054b50, 0);
  eocd.writeUInt16LE(options.zip64 === true ? 0xffff : members.length, 8);
  eocd.writeUInt16LE(options.zip64 === true ? 0xffff : members.length, 10);
  eocd.writeUInt32LE(options.zip64 === true ? 0xffffffff : cd.length, 12);
  eocd.writeUInt32LE(options.zip64 === true ? 0xffffffff : cdOffset, 16);
  eocd.writeUInt16LE(comment.length, 20);
  push(eocd);
  push(comment);
  return Buffer.concat(parts);
}

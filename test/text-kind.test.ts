/** notText (src/textKind.ts): what a file handed over as text plainly is not, from its first bytes. */
import { describe, expect, it } from 'vitest';
import { gzipSync } from 'node:zlib';
import { TEXT_HEAD_BYTES, notText } from '../src/textKind.js';

const bytes = (...b: number[]) => new Uint8Array(b);

describe('notText', () => {
  it('names compressed files, archives and UTF-16 by their leading bytes, and NUL bytes in the head', () => {
    expect(notText(gzipSync(Buffer.from('iteration 1/ 10 |')))).toMatch(/^it is gzip-compressed/);
    expect(notText(bytes(0x28, 0xb5, 0x2f, 0xfd, 0))).toMatch(/^it is zstd-compressed/);
    expect(notText(Buffer.from('BZh91AY&SY'))).toMatch(/^it is bzip2-compressed/);
    expect(notText(bytes(0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00))).toMatch(/^it is xz-compressed/);
    expect(notText(bytes(0x50, 0x4b, 0x03, 0x04, 20))).toMatch(/^it is a zip archive/);
    expect(notText(bytes(0xff, 0xfe, 0x73, 0))).toBe('it is UTF-16 text: save it as UTF-8');
    expect(notText(bytes(0xfe, 0xff, 0, 0x73))).toBe('it is UTF-16 text: save it as UTF-8');
    expect(notText(Buffer.from('seq_len', 'utf16le'))).toMatch(/^it holds NUL bytes/);
  });
  it('takes text as text: UTF-8 with or without a BOM, CRLF, a word that starts like a signature, an empty file; a NUL past the head is not read', () => {
    for (const t of ['seq_len,total_gib\r\n4096,10\r\n', '\ufeffseq_len,total_gib\n', 'PK is a word', 'BZ', '', 'é ü ∞'])
      expect(notText(Buffer.from(t)), JSON.stringify(t)).toBeNull();
    const late = Buffer.alloc(TEXT_HEAD_BYTES + 1, 0x61);
    late[TEXT_HEAD_BYTES] = 0;
    expect(notText(late)).toBeNull();
    late[TEXT_HEAD_BYTES - 1] = 0;
    expect(notText(late)).toMatch(/NUL/);
  });
});

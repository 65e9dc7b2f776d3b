/**
 * What a file handed over as text (a Megatron-LM log, an activation_memory.csv) plainly is not, from its first bytes:
 * compressed, an archive, UTF-16, or other binary; null where it may be text. Decoded as UTF-8 anyway, such a file read
 * as a log with no argument dump or as a CSV with a garbled header, which said what was missing, not why. The CLI's
 * replay and the page's drop zone refuse with these words.
 */

/** Leading bytes and what they make the file, with what to do. */
const SIGNATURES: [bytes: number[], what: string][] = [
  [[0x1f, 0x8b], 'it is gzip-compressed: decompress it first (gunzip)'],
  [[0x28, 0xb5, 0x2f, 0xfd], 'it is zstd-compressed: decompress it first (zstd -d)'],
  [[0x42, 0x5a, 0x68], 'it is bzip2-compressed: decompress it first (bunzip2)'],
  [[0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00], 'it is xz-compressed: decompress it first (unxz)'],
  [[0x50, 0x4b, 0x03, 0x04], 'it is a zip archive: extract the file from it first (unzip)'],
  [[0xff, 0xfe], 'it is UTF-16 text: save it as UTF-8'],
  [[0xfe, 0xff], 'it is UTF-16 text: save it as UTF-8'],
];

/** How many leading bytes notText reads. */
export const TEXT_HEAD_BYTES = 4096;

/** Why a file whose first bytes are `head` (TEXT_HEAD_BYTES of them, or all of a shorter file) is not text, or null. */
export function notText(head: Uint8Array): string | null {
  for (const [bytes, what] of SIGNATURES) if (bytes.every((b, i) => head[i] === b)) return what;
  if (head.subarray(0, TEXT_HEAD_BYTES).includes(0)) return 'it holds NUL bytes (UTF-16 without a byte-order mark, or a binary file): save it as UTF-8 text';
  return null;
}

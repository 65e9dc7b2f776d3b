/** Byte counts in words, for the CLI and the page alike (no Node imports). */

const BYTE_UNITS = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB'] as const;

/**
 * Bytes in the largest of B, KiB, MiB, GiB, TiB, PiB in which the value (two decimals) is at least 1: small models
 * stay readable, and so do sizes no GPU holds (a micro batch of 100000: 1.91 PiB, not 2001504.92 GiB).
 */
export function formatBytes(bytes: number): string {
  for (let i = BYTE_UNITS.length; i >= 1; i--) {
    const v = (bytes / 1024 ** i).toFixed(2);
    if (Math.abs(Number(v)) >= 1) return `${v} ${BYTE_UNITS[i - 1]}`;
  }
  return `${Number.isInteger(bytes) ? bytes : bytes.toFixed(2)} B`;
}

// Shared by the ceiling GEMMs gemm_sgmm_direct.wgsl and gemm_sgmm_padded.wgsl: which BM×BN tile
// of C a workgroup computes. The dispatch is (N / BN, M / BM); the linear workgroup id is
// re-ordered in groups of GROUP_M tile rows (column-major inside a group), so the workgroups
// resident at one time cover a squarish patch of C and share both A rows and B columns in L2
// (plain row order sweeps all of B for every row of tiles).
// In range by construction: id < tilesM·tilesN, so first < tilesM, 1 ≤ rows ≤ GROUP_M and
// r < rows·tilesN (the last group holds only rows·tilesN ids): the row first + r % rows < tilesM
// and the column r / rows < tilesN.
const GROUP_M: u32 = 8u;

fn gemm_tile(id: u32, tilesM: u32, tilesN: u32) -> vec2<u32> {
  let per = GROUP_M * tilesN;           // workgroups per group of tile rows
  let first = (id / per) * GROUP_M;     // the group's first tile row
  let rows = min(tilesM - first, GROUP_M);
  let r = id % per;
  return vec2<u32>(first + r % rows, r / rows);
}

#!/usr/bin/env bash
# The NVIDIA driver's statistics (registers, spills, ...) of the kernels one bench point compiles, from the project root
# on the GPU host, inside the bundle (bash .gpu/enter.sh bash bench/regstats/run.sh TAG OUTDIR [VAR=VALUE…]): the bench
# runs once at N = 16384, B1 H1, D = ${RS_D:-128}, f32, not causal, with Dawn dumping every module's WGSL and SPIR-V (the VAR=VALUE
# pins set the plan, e.g. FLASHRING_PORTABLE_FWD_PREFETCH=0); each SPIR-V module is assembled again (.regstats/spirv-as)
# and built as a plain Vulkan pipeline (.regstats/regstats), whose statistics go to OUTDIR/TAG.jsonl, one line a module
# with the kernel's family and constants. Needs bench/regstats/build.sh's .regstats/ carried. Not quite Dawn's own pipeline:
# maximal reconvergence is dropped (extract.mjs), and Vulkan's robustBufferAccess follows FLASHRING_ROBUST as Dawn sets it
# (robustBufferAccess2 is never enabled); the statistics are the driver's compile of the same SPIR-V otherwise.
set -uo pipefail
tag=$1 out=$2; shift 2
mkdir -p "$out/$tag"; R=$(pwd)/.regstats
env FLASHRING_DAWN_FLAGS='enable-dawn-features=dump_shaders' FLASHRING_ROBUST=${FLASHRING_ROBUST:-1} "$@" timeout 120 node bin/flashring.mjs bench \
  --N 16384 --heads 1 --batch 1 --D "${RS_D:-128}" --precision "${RS_PREC:-f32}" --causal false --reps 1 --no-ring --no-memory --out "$out/$tag/bench" \
  > "$out/$tag/dawn.log" 2>&1 || echo "$tag: bench exit $?"
node bench/regstats/extract.mjs "$out/$tag/dawn.log" "$out/$tag" > "$out/$tag/modules.jsonl" || { echo "$tag: extract failed"; exit 1; }
xz -f "$out/$tag/dawn.log"
: > "$out/$tag.jsonl"
while IFS= read -r line; do
  f=$(node -e 'const m = JSON.parse(process.argv[1]); console.log(m.file, m.entry, m.layout, m.version)' "$line")
  set -- $f
  LD_LIBRARY_PATH=$R/lib $R/spirv-as --target-env "spv$4" "$1" -o "${1%.spvasm}.spv" 2> "${1%.spvasm}.err" || { echo "$tag: spirv-as failed on $1: $(head -2 ${1%.spvasm}.err)"; continue; }
  s=$($R/regstats "$2" "$3" "${1%.spvasm}.spv" "${FLASHRING_ROBUST:-1}" 2> "${1%.spvasm}.err") || { echo "$tag: regstats failed on $1: $(head -2 ${1%.spvasm}.err)"; continue; }
  node -e 'const m = JSON.parse(process.argv[1]); for (const s of process.argv[2].split("\n").filter(Boolean)) console.log(JSON.stringify({ tag: process.argv[3], ...m, stats: JSON.parse(s) }))' "$line" "$s" "$tag" >> "$out/$tag.jsonl"
done < "$out/$tag/modules.jsonl"
node -e '
  for (const l of require("fs").readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean)) {
    const m = JSON.parse(l), c = m.consts, s = { ...m.stats }; for (const k of ["file", "entry", "executable"]) delete s[k];
    console.log(`${m.tag.padEnd(10)} ${m.family.padEnd(11)} ${m.st ?? ""} D${c.D} ${c.BR}x${c.BC} WG${c.WG} DC${c.DC ?? "-"} PF${c.PF ?? "-"}${m.sharedP ? " sharedP" : ""}  ${JSON.stringify(s)}`);
  }' "$out/$tag.jsonl"

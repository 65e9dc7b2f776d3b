#!/usr/bin/env bash
# Prepared 2026-12-06 (third session of the day). One device call, from the project root, carry [".gpu"], other
# results folders set aside (bash bench/results-aside.sh out wip-session-suite), any single-GPU kind:
#   bash .gpu/enter.sh bash bench/results/wip-session-suite/gpu-call.sh
# The session's tree on a real GPU: no kernel changed, but every entry script now registers its loaders through
# bin/loaders.mjs (the command, the rank process, the benches' runners, the robustness tests' children), the
# attention command writes a fuller run record, and the binding-limit message changed. So: the GPU suite with
# tensor cores required (numbers against float64 on this card), then the command's own test files (the command, the
# ring across rank processes, the first run docs/cli.md gives, the fresh-clone check) on this card.
set -uo pipefail
: "${OUT:?run through the device tool (OUT: its return folder)}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt" 2>&1; date -u +%FT%TZ > "$OUT/date.txt"
echo "gpu: $(cat "$OUT/gpu.txt")"
FLASHRING_REQUIRE_TENSOR_CORES=1 timeout 300 vitest run --project gpu > "$OUT/gpu-tc.log" 2>&1
echo "gpu rc=$?"
timeout 240 vitest run test/cli.test.ts test/cli-first-run.test.ts test/cli-processes.test.ts test/ring-process.test.ts test/cli-fresh-clone.test.ts > "$OUT/cli.log" 2>&1
echo "cli rc=$?"
for f in gpu-tc cli; do echo "== $f"; sed 's/\x1b\[[0-9;]*m//g' "$OUT/$f.log" | grep -E "Test Files|Tests  |^ +×|FAIL|Duration" | cut -c1-200 | head -20; done

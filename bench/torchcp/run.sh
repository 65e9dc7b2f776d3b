#!/usr/bin/env bash
# The measured-companion sweep on a host with 1 or 2 GPUs and PyTorch (the GPU host here):
# CP=1 and CP=2, each with and without selective recomputation, sequence lengths until OOM.
#   bash bench/torchcp/run.sh OUTDIR
# Writes OUTDIR/points.jsonl and OUTDIR/*.log; bench/torchcp/to_csv.py turns them into
# activation_memory.csv rows. The same script runs unchanged with more GPUs: set CPS="1 2 4 8".
set -uo pipefail
out=${1:?usage: run.sh OUTDIR}; mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 TORCH_NCCL_ASYNC_ERROR_HANDLING=1 PYTHONUNBUFFERED=1
here=$(cd "$(dirname "$0")" && pwd)
ngpu=$(nvidia-smi -L | wc -l)
for cp in ${CPS:-1 2}; do
  [ "$cp" -le "$ngpu" ] || { echo "skip CP=$cp: only $ngpu GPU(s)"; continue; }
  for rc in ${RECOMPUTE:-none selective}; do
    echo "== CP=$cp recompute=$rc"
    if [ "$cp" = 1 ]; then
      timeout ${POINT_TIMEOUT:-900} python3 "$here/cp_memory.py" --cp 1 --recompute "$rc" --out "$out/points.jsonl" ${EXTRA:-} 2>&1 | tee "$out/cp1_$rc.log" | grep -v Warning
    else
      timeout ${POINT_TIMEOUT:-900} python3 -m torch.distributed.run --nproc-per-node "$cp" "$here/cp_memory.py" --cp "$cp" --recompute "$rc" \
        --out "$out/points.jsonl" ${EXTRA:-} 2>&1 | tee "$out/cp${cp}_$rc.log" | grep -v Warning
    fi
  done
done

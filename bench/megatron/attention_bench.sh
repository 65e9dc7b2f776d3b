#!/usr/bin/env bash
# The seed module's Megatron-LM sweep, for a user with one 8-GPU node and Megatron-LM (with
# Transformer Engine: Megatron-LM's context parallelism needs it). Each run's log is kept;
# `npx flashring replay OUT/*.log --csv OUT/activation_memory.csv` turns them into measured
# points (median iteration time after 10 warm-up iterations, peak max-allocated over ranks).
#
#   MEGATRON=/path/to/Megatron-LM bash bench/megatron/attention_bench.sh OUT [phase...]
# phases: baseline sp cp recompute curve (default: all). Runs that go out of memory are kept
# (replay marks them); the sweep goes on.
#
# Notes on the seed's commands:
#  - `--data-path mock` is spelled `--mock-data` in Megatron-LM core; with mock data a
#    NullTokenizer with Llama-3's vocabulary size avoids needing a tokenizer file.
#  - `--recompute-method block` applies to full recomputation only; selective takes none.
#  - --log-throughput adds TFLOP/s per GPU to the iteration lines; memory lines are printed at
#    the first log interval by data-parallel rank 0 of each model-parallel group.
set -uo pipefail
out=${1:?usage: MEGATRON=... attention_bench.sh OUT [baseline sp cp recompute curve]}; shift
phases=${*:-baseline sp cp recompute curve}
: "${MEGATRON:?set MEGATRON to a Megatron-LM checkout}"
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1
GPUS=${GPUS:-8}

model=(--num-layers 32 --hidden-size 4096 --num-attention-heads 32
       --use-flash-attn --bf16 --micro-batch-size 1 --global-batch-size 8
       --train-iters 20 --log-interval 1 --log-throughput --eval-iters 0
       --mock-data --tokenizer-type NullTokenizer --vocab-size 128256
       --lr 1e-4 --min-lr 1e-5 --lr-decay-style cosine)

# run NAME SEQ TP CP [extra flags...]
run() {
  local name=$1 seq=$2 tp=$3 cp=$4; shift 4
  echo "== $name: seq $seq TP=$tp CP=$cp $*"
  timeout "${RUN_TIMEOUT:-1800}" torchrun --nproc-per-node="$GPUS" "$MEGATRON/pretrain_gpt.py" "${model[@]}" \
    --seq-length "$seq" --max-position-embeddings "$seq" \
    --tensor-model-parallel-size "$tp" --context-parallel-size "$cp" "$@" > "$out/$name.log" 2>&1
  echo "   exit $? → $out/$name.log"
}

for phase in $phases; do
  case $phase in
    baseline)  run tp8_s32k 32768 8 1 ;;
    sp)        run tp8_sp_s32k 32768 8 1 --sequence-parallel ;;
    cp)        run tp4_cp2_sp_s128k 131072 4 2 --sequence-parallel ;;
    recompute) run tp4_cp2_sp_sel_s128k 131072 4 2 --sequence-parallel --recompute-granularity selective ;;
    curve)
      # The activation-memory curve: TP x CP = 8, sequence lengths until OOM, with and without
      # selective recomputation.
      for cp in 1 2 4 8; do
        tp=$((GPUS / cp))
        for rc in none selective; do
          for seq in 8192 16384 32768 65536 131072 262144 524288; do
            flags=(--sequence-parallel); [ "$rc" = selective ] && flags+=(--recompute-granularity selective)
            run "curve_tp${tp}_cp${cp}_${rc}_s${seq}" "$seq" "$tp" "$cp" "${flags[@]}"
            grep -q "out of memory" "$out/curve_tp${tp}_cp${cp}_${rc}_s${seq}.log" && break
          done
        done
      done ;;
    *) echo "unknown phase '$phase' (baseline sp cp recompute curve)" >&2; exit 2 ;;
  esac
done
echo "next: npx flashring replay $out/*.log --csv $out/activation_memory.csv"

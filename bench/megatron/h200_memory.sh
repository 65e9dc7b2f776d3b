#!/usr/bin/env bash
# Memory measurements on one H200 for the memory model (issue 16), in one device call:
#   1. real Megatron-LM (source snapshot in .mlm/, local transformer implementation: no
#      Transformer Engine, apex or flash-attn on the host), TP=CP=PP=1, several models, sequence
#      lengths and recompute settings, 3 iterations each (memory is reported after iterations 1
#      and 2, the second with Adam state);
#   2. the PyTorch companion harness (bench/torchcp/cp_memory.py, CP=1) on models the memory
#      model was not fitted to.
# Usage (GPU host, project root, .mlm carried):  bash bench/megatron/h200_memory.sh $OUT
# Writes OUT/megatron_logs.tar.gz (one log per run), OUT/torchcp_points.jsonl, OUT/summary.txt.
set -uo pipefail
out=${1:?usage: h200_memory.sh OUTDIR}; mkdir -p "$out/mlm"
root=$(cd "$(dirname "$0")/../.." && pwd)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 CUDA_DEVICE_MAX_CONNECTIONS=1 PYTHONUNBUFFERED=1 OMP_NUM_THREADS=2
port=29600
common="--transformer-impl local --no-persist-layer-norm --no-masked-softmax-fusion --no-bias-gelu-fusion
 --no-bias-dropout-fusion --no-rope-fusion --no-gradient-accumulation-fusion --mock-data --tokenizer-type NullTokenizer
 --eval-iters 0 --eval-interval 1000 --bf16 --lr 1e-4 --log-interval 1 --log-throughput --train-iters 3
 --micro-batch-size 1 --global-batch-size 1"
A="--num-layers 4 --hidden-size 1024 --num-attention-heads 16 --vocab-size 32000"
B="--num-layers 8 --hidden-size 2048 --num-attention-heads 16 --vocab-size 50257"
C="--num-layers 4 --hidden-size 2048 --num-attention-heads 16 --group-query-attention --num-query-groups 4 --swiglu
 --ffn-hidden-size 5632 --position-embedding-type rope --untie-embeddings-and-output-weights --attention-dropout 0
 --hidden-dropout 0 --normalization RMSNorm --disable-bias-linear --vocab-size 32000"
run() { # name seq model-flags... (in the background)
  local name=$1 seq=$2; shift 2; port=$((port + 1))
  ( cd "$root/.mlm" && timeout 240 torchrun --nproc-per-node 1 --master-port $port pretrain_gpt.py $common \
      --seq-length $seq --max-position-embeddings $seq "$@" > "$out/mlm/$name.log" 2>&1; echo "exit $?" >> "$out/mlm/$name.log" ) &
}
t0=$(date +%s)
echo "== Megatron-LM wave 1"
run A-s4096-none 4096 $A
run A-s8192-none 8192 $A
run A-s8192-selective 8192 $A --recompute-granularity selective
run A-s8192-sel-core_attn-mlp 8192 $A --recompute-granularity selective --recompute-modules core_attn mlp
wait
echo "== wave 2 ($(( $(date +%s) - t0 )) s)"
run A-s8192-sel-layernorm 8192 $A --recompute-granularity selective --recompute-modules layernorm
run A-s8192-full-uniform1 8192 $A --recompute-granularity full --recompute-method uniform --recompute-num-layers 1
run A-s8192-full-block2 8192 $A --recompute-granularity full --recompute-method block --recompute-num-layers 2
run C-s8192-none 8192 $C
run C-s8192-sel-core_attn-mlp 8192 $C --recompute-granularity selective --recompute-modules core_attn mlp
wait
echo "== wave 3 ($(( $(date +%s) - t0 )) s)"
run B-s4096-none 4096 $B
run B-s8192-none 8192 $B
run B-s8192-full-block4 8192 $B --recompute-granularity full --recompute-method block --recompute-num-layers 4
run A-s16384-full-uniform2 16384 $A --recompute-granularity full --recompute-method uniform --recompute-num-layers 2
wait
echo "== wave 4 ($(( $(date +%s) - t0 )) s)"
run A-s16384-none 16384 $A
run B-s8192-sel-core_attn-mlp 8192 $B --recompute-granularity selective --recompute-modules core_attn mlp
wait
echo "== torchcp harness ($(( $(date +%s) - t0 )) s)"
tc() { timeout 150 python3 "$root/bench/torchcp/cp_memory.py" --cp 1 --out "$out/torchcp_points.jsonl" "$@" 2>&1 | grep -v Warning | tail -2; }
tc --layers 4 --hidden 2048 --heads 16 --vocab 32000 --seq 8192,32768,131072 --recompute none
tc --layers 4 --hidden 2048 --heads 16 --vocab 32000 --seq 8192,32768,131072 --recompute attn_mlp
tc --layers 4 --hidden 2048 --heads 16 --vocab 32000 --seq 8192,32768,131072 --recompute full
tc --layers 12 --hidden 1024 --heads 8 --vocab 50257 --seq 16384,65536 --recompute none
tc --layers 8 --hidden 4096 --heads 32 --vocab 8192 --seq 16384,49152 --recompute attn_mlp
echo "== done ($(( $(date +%s) - t0 )) s)"
( cd "$out" && tar -czf megatron_logs.tar.gz mlm && rm -rf mlm )
cd "$out" && mkdir -p x && tar -xzf megatron_logs.tar.gz -C x && for f in x/mlm/*.log; do
  printf '%-34s %-8s %s | %s\n' "$(basename $f .log)" "$(tail -1 $f)" \
    "$(grep -o 'after 2 iterations) memory (MB) | allocated: [0-9.]* | max allocated: [0-9.]*' $f | sed 's/.*max allocated: //')" \
    "$(grep -o 'Theoretical memory footprints.*' $f | head -1)"
done | tee summary.txt; rm -rf x
grep -h '"seq_len"' torchcp_points.jsonl | python3 -c "
import sys, json
for l in sys.stdin:
    p = json.loads(l); print(p['layers'], p['hidden'], p['vocab'], p['recompute'], p['seq_len'], 'OOM' if p.get('oom') else round(p['max_allocated_gib'], 3), round(p.get('static_gib', 0), 3))
" | tee -a summary.txt

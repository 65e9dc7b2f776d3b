# The second command (00:13:27 UTC), on the same warm machine, as passed to the device tool (carry [".gpu"], the other
# results folders aside but wip-bwd32 and wip-unp, the tree of gpu-call.sh; unp's edits then at
# bench/results/wip-unp/edits.json, here unp/edits.json):
export LIMIT=250 O=/tmp/unp2; mkdir -p $O; bash .gpu/enter.sh bash -c 'source bench/gpu-lib.sh; card; peer 128; variant bench/results/wip-unp/edits.json unp; SC_D=128 same_call t16a 1 f16 FLASHRING_PATH=scalar; (cd /tmp/v-unp && SC_D=128 same_call unp 1 f16 FLASHRING_PATH=scalar); SC_D=128 same_call pf2 1 f16 FLASHRING_PATH=scalar FLASHRING_PORTABLE_FWD_PREFETCH=2; SC_D=128 same_call t16b 1 f16 FLASHRING_PATH=scalar; grep -E " fwd " $O/table.txt; cat $O/peer.log | tail -5'

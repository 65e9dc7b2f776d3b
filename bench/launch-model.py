#!/usr/bin/env python3
"""A list-scheduling model of a causal attention grid's tail (docs/performance.md, "Seventh round").

Workgroups start in launch order (x fastest, then heads) on SLOTS resident places (SMs x workgroups
per SM); each runs for as many key tiles as its row block visits, plus a fixed OVER tiles; a place
takes the next workgroup when it frees. Efficiency = busy time / (places x makespan). Two orders:
head by head (FLASHRING_HEAD_GROUP=1: each head's blocks longest first, heads one after another) and
heads taking turns (=all: every head's longest block, then every head's next, ...). Shapes: a
causal call of N tokens (R = 1) and a p2p zigzag diagonal step at R (a rank's two runs of N/2R
tokens: the first causal, the second seeing all of the first and itself causally), B x H heads,
Br-row blocks. Not a measurement: it predicts; bench/order-h200.sh measures.

--split CAP,...: a split-key scheduler (issue 37, item 2) as the model sees it: a row block visiting
more than CAP key tiles runs as ceil(tiles / CAP) workgroups over equal key ranges, each with the
fixed cost, heads in turn, longest first; the merge of their partial (O, LSE) is not counted (a
small pass over the split rows only, priced by --merge tiles per split block, added to the busy time
and spread over the places).

  python3 bench/launch-model.py [--slots 264] [--N 16384] [--H 16] [--BR 128] [--over 0.5] [--split 8,4] [--merge 0.25]
"""
import argparse
import heapq


def makespan(costs, slots):
    free = [0.0] * slots
    for c in costs:
        heapq.heappush(free, heapq.heappop(free) + c)
    return max(free)


def efficiency(costs, slots):
    return sum(costs) / (slots * makespan(costs, slots))


def block_keys(N, R, BR):
    """Keys each row block visits, in block order (0 = first rows)."""
    if R == 1:
        return [(k + 1) * BR for k in range(N // BR)]
    run = N // (2 * R)
    first = [(k + 1) * BR for k in range(run // BR)]
    return first + [run + x for x in first]


def grid(N, R, H, BR, over, turns):
    per_head = [keys / BR + over for keys in reversed(block_keys(N, R, BR))]   # longest first
    if turns:
        return [c for c in per_head for _ in range(H)]
    return [c for _ in range(H) for c in per_head]


def split_grid(N, R, H, BR, over, cap):
    """Heads in turn, longest first, blocks past cap key tiles split into equal key ranges; also the blocks split."""
    pieces = []
    for keys in block_keys(N, R, BR):
        t = keys / BR
        p = max(1, -(-int(t) // cap))
        pieces += [(t / p + over, p > 1)] * p
    pieces.sort(key=lambda x: -x[0])
    split_blocks = sum(1 for keys in block_keys(N, R, BR) if keys / BR > cap) * H
    return [c for c, _ in pieces for _ in range(H)], split_blocks


def split_efficiency(N, R, H, BR, over, cap, merge, slots):
    """Useful work (the unsplit grid's) over places x (makespan + the merge pass spread over the places)."""
    costs, split_blocks = split_grid(N, R, H, BR, over, cap)
    useful = sum(grid(N, R, H, BR, over, True))
    return useful / (slots * (makespan(costs, slots) + split_blocks * merge / slots))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--slots', type=int, default=264, help='resident workgroups (132 SMs x 2 on the H200 forward at D=128)')
    ap.add_argument('--N', type=int, default=16384)
    ap.add_argument('--H', type=int, default=16, help='(head, batch) pairs')
    ap.add_argument('--BR', type=int, default=128, help='rows per workgroup')
    ap.add_argument('--over', type=float, default=0.5, help='fixed cost per workgroup, in key tiles of BR keys')
    ap.add_argument('--split', default='', help='comma-separated caps, in key tiles, for the split-key rows')
    ap.add_argument('--merge', type=float, default=0.25, help='the merge pass, in key tiles per split row block')
    a = ap.parse_args()
    print(f'slots {a.slots}, N {a.N}, H {a.H}, Br {a.BR}, fixed cost {a.over} tiles: efficiency by launch order')
    print(f"{'call':22} {'head by head':>13} {'heads in turn':>14} {'vs R=1 head by head':>20}")
    r1 = efficiency(grid(a.N, 1, a.H, a.BR, a.over, False), a.slots)
    for R in (1, 2, 4, 8):
        if R > 1 and (a.N // (2 * R)) % a.BR:
            continue
        e = [efficiency(grid(a.N, R, a.H, a.BR, a.over, t), a.slots) for t in (False, True)]
        name = 'R=1 (one causal call)' if R == 1 else f'R={R} diagonal step'
        print(f'{name:22} {e[0]:13.3f} {e[1]:14.3f} {e[0] / r1:10.2f} -> {e[1] / r1:.2f}')
    caps = [int(c) for c in a.split.split(',') if c]
    if caps:
        r1t = efficiency(grid(a.N, 1, a.H, a.BR, a.over, True), a.slots)
        print(f"\nsplit-key rows (heads in turn), efficiency and its ratio to R=1 in turn; merge {a.merge} tiles per split block")
        print(f"{'call':22} " + ' '.join(f'{"cap " + str(c):>14}' for c in caps))
        for R in (1, 2, 4, 8):
            if R > 1 and (a.N // (2 * R)) % a.BR:
                continue
            name = 'R=1 (one causal call)' if R == 1 else f'R={R} diagonal step'
            es = [split_efficiency(a.N, R, a.H, a.BR, a.over, c, a.merge, a.slots) for c in caps]
            print(f'{name:22} ' + ' '.join(f'{e:7.3f} ({e / r1t:.2f})' for e in es))


if __name__ == '__main__':
    main()

#!/usr/bin/env bash
# The trees gpu-call.sh benches, one per commit (run in the project root before the device call;
# the device tool carries scratch/, packed, with .gpu/):
#   bash bench/results/2026-12-03-mask-cost-h200/bisect/make-trees.sh
# Each tree takes its node_modules from the project root's (package.json did not change in the range).
set -euo pipefail
mkdir -p scratch/bisect
for c in 077265c 411d6c1 0fbccf0 fbb2f0a c3504ac d383fb0 bb22266 3a09826 fc90fda 2b7086d ceccbf4 b53e6fb; do
  mkdir -p scratch/bisect/$c
  git archive $c src shaders bin bench package.json tsconfig.json ':(exclude)bench/results' | tar -x -C scratch/bisect/$c
done
(cd scratch && tar -cJf bisect.tar.xz bisect && rm -rf bisect)

#!/usr/bin/env bash
# On the GPU machine, after scripts/device_run.sh installed wavedp: Nsight Compute sections
# for one score-only multipass sweep, and the SASS instruction mix of its inner loop.
# Usage: scripts/device_profile.sh [N] [ROWS]
set -uo pipefail
n=${1:-200000}
r=${2:-16}
out=${OUT:-/tmp/wavedp-out}
export PYTHONPATH=${PYTHONPATH:-}:/tmp/site
ncu --kernel-name regex:multipass --launch-skip 1 --launch-count 1 \
    --section SpeedOfLight --section Occupancy --section SchedulerStats \
    --section WarpStateStats --section InstructionStats --section ComputeWorkloadAnalysis \
    --section MemoryWorkloadAnalysis --section SourceCounters \
    python3 benchmarks/profile_sweep.py "$n" "$r" > "$out/ncu.txt" 2>&1
grep -vE "^\s*$|----" "$out/ncu.txt" | grep -E "Duration|Throughput|Occupancy|Registers|Warp Cycles|Issued|Eligible|No Eligible|Active Warps|Executed Ipc|Stall|Pipe|L1|L2|DRAM|Bank|Block Limit" | head -60
src=$(mktemp -d)
cp src/wavedp/kernels/*.cu src/wavedp/kernels/*.cuh "$src"/
sig="const u8*, const u8*, const int*, int, int, int, int, int, int, int, const int*, const int*, const int*, const int*, int*, int*, int*, int*, int*, unsigned long long, int, i64, i64, int, int*, int*, u8*, int*, int*, int*"
printf '#include "multipass.cu"\ntemplate __global__ void multipass<0,%s,false>(%s);\n' "$r" "$sig" > "$src/inst.cu"
nvcc -arch=sm_90 -std=c++17 -cubin -o "$src/inst.cubin" "$src/inst.cu" && \
    cuobjdump -sass "$src/inst.cubin" > "$out/sass.txt"
echo "SASS instructions (whole kernel):"
grep -oE "^\s+/\*[0-9a-f]{4}\*/\s+(@!?U?P[0-9T] )?[A-Z][A-Z0-9]*" "$out/sass.txt" | awk '{print $NF}' \
    | sort | uniq -c | sort -rn | head -25

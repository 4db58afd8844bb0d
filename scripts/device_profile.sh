#!/usr/bin/env bash
# On the GPU machine, after scripts/device_run.sh installed wavedp: Nsight Compute sections
# for one score-only multipass sweep (clocks left alone), plus per-SASS-instruction
# execution counts and stall samples as CSV ($OUT/ncu_sass.csv; benchmarks/sass_profile.py
# summarises it). Usage: scripts/device_profile.sh [N] [ROWS]
set -uo pipefail
n=${1:-200000}
r=${2:-32}
out=${OUT:-/tmp/wavedp-out}
mkdir -p "$out"
export PYTHONPATH=${PYTHONPATH:-}:/tmp/site
rep=/tmp/wavedp-prof
ncu --clock-control none --kernel-name regex:multipass --launch-skip 1 --launch-count 1 \
    --section SpeedOfLight --section Occupancy --section SchedulerStats \
    --section WarpStateStats --section InstructionStats --section ComputeWorkloadAnalysis \
    --section MemoryWorkloadAnalysis --section SourceCounters --import-source no -f -o "$rep" \
    python3 benchmarks/profile_sweep.py "$n" "$r" > "$out/ncu_run.txt" 2>&1 || tail -5 "$out/ncu_run.txt"
ncu -i "$rep.ncu-rep" --page details > "$out/ncu.txt" 2>&1
ncu -i "$rep.ncu-rep" --page source --print-source sass --csv > "$out/ncu_sass.csv" 2>&1
grep -vE "^\s*$|----" "$out/ncu.txt" | grep -E "Frequency|Duration|Throughput|Ipc|Issued Warp|Eligible|Active Warps|Warp Cycles|Executed Instructions|Registers|Bank|Issue Slots" | head -30
wc -c "$out/ncu_sass.csv"

#!/usr/bin/env bash
# On the GPU machine (run from the repository root): install wavedp offline (wheels for the
# packages the device image lacks are carried in .whl/, the benchmark queries in .carry/), run
# the GPU tests, then the GPU benchmarks. The image lacked (2026-11-30, Python 3.12): biopython,
# parasail, platformdirs, pyfastx, pyopal with archspec and scoring-matrices, starlette and
# uvicorn. Usage:
#   scripts/device_run.sh [tests|bench|search|hits|partition|terms|scaleout|polyadic|lab|
#       labquick|energy|barriers|compare|scores|makedb|stats|versus|timeline|coldscan|twogpus|
#       pairs|pairshost|pairfills|bigpairs|cpuscale|ncupairs|onequery|profiles|serve|all][,...] [-k expr]
# (several parts separated by commas run in one call, in the order of this script)
# TESTS names the test files (default: the whole tests folder).
set -uo pipefail
what=${1:-all}
shift || true
export PYTHONUNBUFFERED=1
out=${OUT:-/tmp/wavedp-out}
mkdir -p "$out"
if ls .whl/*.whl >/dev/null 2>&1; then
    # compiled to bytecode as a plain pip install does (the device sets
    # PYTHONDONTWRITEBYTECODE: uncompiled, every fresh process compiles them again)
    python3 -m pip install -q --no-index --no-deps --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl || exit 1
    export PYTHONPATH=/tmp/site
fi
python3 -m pip install -q --no-index --no-deps --no-build-isolation . 2>&1 | tail -3 || exit 1
# Nsight Compute (the lab's off-chip traffic) where the toolkit has it
[[ -x /usr/local/cuda/bin/ncu ]] && export PATH="$PATH:/usr/local/cuda/bin"
python3 -c "import wavedp; print('wavedp', wavedp.__version__, wavedp.__file__)"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw --format=csv
status=0
want() { [[ ,$what, == *,$1,* ]]; }  # the part $1 was asked for
# CUDASW4_SRC: a folder of CUDASW++4.0's sources (not part of wavedp; default .carry/cudasw4);
# build_cudasw4 TARGET... builds its programs there (kept in $OUT/cudasw4-bin, so that a
# later call can carry them in CUDASW4_SRC and skip the build). CUDA 13 needs its .cpp files
# compiled as CUDA (-x cu) and has NVTX header-only (no -lnvToolsExt).
CUDASW4_SRC=${CUDASW4_SRC:-.carry/cudasw4}
build_cudasw4() {
    local missing=()
    for target in "$@"; do [[ -x $CUDASW4_SRC/$target ]] || missing+=("$target"); done
    if (( ${#missing[@]} )); then
        sed -i 's/ -lnvToolsExt//; s/^COMPILE = $(COMPILER) /COMPILE = $(COMPILER) -x cu /' \
            "$CUDASW4_SRC/Makefile"
        local start=$SECONDS
        make -C "$CUDASW4_SRC" -j"$(nproc)" "${missing[@]}" > "$out/cudasw4_build.log" 2>&1 \
            || echo "CUDASW++4.0 did not build: see cudasw4_build.log"
        echo "CUDASW++4.0 ${missing[*]} built in $((SECONDS - start)) s"
        mkdir -p "$out/cudasw4-bin"
        for target in "$@"; do
            [[ -x $CUDASW4_SRC/$target ]] && cp "$CUDASW4_SRC/$target" "$out/cudasw4-bin/"
        done
    fi
}
if want tests || want all; then
    python3 -m pytest -m gpu -q --maxfail=8 --durations=12 -p no:cacheprovider ${TESTS:-tests} ${1:+-k "$1"} 2>&1 \
        | tee "$out/gpu_tests.log" | tail -40
    status=${PIPESTATUS[0]}
fi
if want search || want all; then
    python3 benchmarks/search.py --device gpu --align-all 5000 2>&1 | tee "$out/search_bench.log"
    python3 benchmarks/search.py --device gpu --lognormal --sequences 300000 --length 350 \
        2>&1 | tee -a "$out/search_bench.log"
    # short, skewed lengths: the predictor's choice against one launch per chunk
    for partition in auto none; do
        python3 benchmarks/search.py --device gpu --lognormal --sequences 1000000 --length 60 \
            --partition $partition 2>&1 | tee -a "$out/search_bench.log"
    done
    python3 benchmarks/search.py --device cpu --sequences 100000 2>&1 \
        | tee -a "$out/search_bench.log"
fi
if want partition || want all; then
    # the predictor calibrated (timed), then every partitioning on skewed sets
    wavedp calibrate 2>&1 | tee "$out/partition_bench.log"
    cp "$(python3 -c 'from wavedp.engines.calibration import cache_path; print(cache_path("gpu"))')" \
        "$out/"
    python3 benchmarks/partitioning.py --launches --json "$out/partition.json" 2>&1 | tee -a "$out/partition_bench.log"
fi
if want compare; then
    # this tree against BASELINE (the source tree of an earlier commit: git archive COMMIT
    # src benchmarks pyproject.toml README.md | tar -x -C .carry/base), on this machine in
    # one run, taking turns: the CLI's outputs compared byte for byte, the search benchmark
    # (20 queries x 1,000,000 x 512) and the partitioning benchmark (one calibration, which
    # both read); COMPARE names the parts (default: outputs,search,partition)
    base=${BASELINE:-.carry/base}
    python3 -m pip install -q --no-index --no-deps --no-build-isolation --target /tmp/base-site \
        "$base" 2>&1 | tail -2
    as_base() { PYTHONPATH=/tmp/base-site${PYTHONPATH:+:$PYTHONPATH} "$@"; }
    parts=${COMPARE:-outputs,search,partition}
    if [[ ,$parts, == *,outputs,* ]]; then
        queries=$(ls ../shared/data/allqueries.fasta .carry/allqueries.fasta 2>/dev/null | head -1)
        (cd benchmarks && python3 seeded_fasta.py /tmp/cmp.fa --sequences 200000 \
            --plant "../$queries")
        for who in base this; do
            run=(); [[ $who == base ]] && run=(as_base)
            "${run[@]}" python3 -m wavedp.cli makedb /tmp/cmp.fa -o /tmp/cmp-$who.wdb 2>&1
            for fmt in blast6 sam; do  # the whole command, from a fresh process
                TIMEFORMAT="$who search --format $fmt: %R s"
                time "${run[@]}" python3 -m wavedp.cli search "$queries" /tmp/cmp-$who.wdb \
                    --device gpu --format $fmt -o /tmp/cmp-$who.$fmt 2>/dev/null
            done
        done
        for fmt in blast6 sam; do  # SAM's @PG line names the command, which is the same
            cmp <(grep -v '^@PG' /tmp/cmp-base.$fmt) <(grep -v '^@PG' /tmp/cmp-this.$fmt) \
                && echo "$fmt outputs identical ($(wc -l < /tmp/cmp-this.$fmt) lines)"
        done 2>&1 | tee "$out/compare_outputs.log"
    fi
    if [[ ,$parts, == *,commands,* ]]; then
        # the 20-query command on SIZES seeded subjects (default 570,000 and 3,000,000),
        # each tree's makedb and search, turns alternating, outputs compared; then
        # --explain's phases (this tree's also with no choice kept: its first search of a
        # database), and CUDASW++4.0 (built from CUDASW4_SRC) on the same file
        queries=$(ls ../shared/data/allqueries.fasta .carry/allqueries.fasta 2>/dev/null | head -1)
        base_env=(env "PYTHONPATH=/tmp/base-site${PYTHONPATH:+:$PYTHONPATH}")
        walled() { python3 -c 'import subprocess as s, sys, time
t = time.perf_counter(); rc = s.call(sys.argv[2:], stdout=s.DEVNULL, stderr=s.DEVNULL)
print(f"{sys.argv[1]}: {time.perf_counter() - t:.3f} s wall, exit {rc}", flush=True)' "$@"; }
        choices=$(python3 -c 'from wavedp.engines.cuda.scan.choices import path; print(path())')
        [[ -d $CUDASW4_SRC ]] && build_cudasw4 align makedb
        for n in ${SIZES:-570000 3000000}; do
            (cd benchmarks && python3 seeded_fasta.py /tmp/db$n.fa --sequences $n \
                --plant "../$queries") >/dev/null
            for who in base this; do
                run=(); [[ $who == base ]] && run=("${base_env[@]}")
                walled "$n $who makedb" "${run[@]}" python3 -m wavedp.cli makedb /tmp/db$n.fa \
                    -o /tmp/db$n-$who.wdb
                walled "$n $who search (untimed warm-up)" "${run[@]}" python3 -m wavedp.cli \
                    search "$queries" /tmp/db$n-$who.wdb -o /dev/null
            done
            for who in base this this base base this; do
                run=(); [[ $who == base ]] && run=("${base_env[@]}")
                rm -f /tmp/out$n-$who.tsv
                walled "$n $who search" "${run[@]}" python3 -m wavedp.cli search "$queries" \
                    /tmp/db$n-$who.wdb -o /tmp/out$n-$who.tsv
            done
            cmp /tmp/out$n-base.tsv /tmp/out$n-this.tsv && echo "$n: outputs identical"
            for who in base this cold; do
                run=(); [[ $who == base ]] && run=("${base_env[@]}")
                [[ $who == cold ]] && rm -f "$choices"
                echo "== $n $who --explain"
                "${run[@]}" python3 -m wavedp.cli search "$queries" \
                    /tmp/db$n-${who/cold/this}.wdb --explain -o /dev/null 2>&1 | tail -8
            done
            if [[ -x $CUDASW4_SRC/align ]]; then
                mkdir -p /tmp/cdb$n
                walled "$n cudasw4 makedb" "$CUDASW4_SRC/makedb" /tmp/db$n.fa /tmp/cdb$n/db
                for turn in 0 1 2; do
                    walled "$n cudasw4 search${turn/0/ (untimed warm-up)}" \
                        "$CUDASW4_SRC/align" --query "$queries" --db /tmp/cdb$n/db --top 10 \
                        --uploadFull --prefetchDBFile --mat blosum62 --singlePassType DPXs16 \
                        --manyPassType_small DPXs16 --manyPassType_large DPXs32 \
                        --tsv --of /tmp/cudasw4-$n.tsv
                done
            fi
        done 2>&1 | tee "$out/compare_commands.log"
    fi
    if [[ ,$parts, == *,search,* ]]; then
        for who in base this this base; do
            echo "== $who: search benchmark"
            if [[ $who == base ]]; then
                as_base python3 "$base/benchmarks/search.py" --device gpu
            else
                python3 benchmarks/search.py --device gpu
            fi
        done 2>&1 | tee "$out/compare_search.log"
    fi
    if [[ ,$parts, == *,partition,* ]]; then
        wavedp calibrate 2>&1 | tail -2
        for who in base this; do
            echo "== $who: partitioning benchmark"
            if [[ $who == base ]]; then
                as_base python3 "$base/benchmarks/partitioning.py" --repeats 3
            else
                python3 benchmarks/partitioning.py --repeats 3
            fi
        done 2>&1 | tee "$out/compare_partition.log"
    fi
fi
if want scores; then
    # every score of 1,000 x 10,000 proteins as one matrix, the GPU's GCUPS
    python3 benchmarks/scores.py --device gpu --queries 1000 --sequences 10000 2>&1 \
        | tee "$out/scores_bench.log"
fi
if want stats; then
    # what the statistics cost a GPU search of 1,000,000 proteins (none, blast, fitted)
    python3 benchmarks/stats_cost.py --device gpu --sequences 1000000 --queries 20 ${PROFILE:+--profile} \
        2>&1 | tee "$out/stats_cost.log"
fi
if want versus; then
    # whole commands beside CUDASW++4.0 on a Swiss-Prot-sized database (one GPU): makedb,
    # 20 queries and one, scores and traceback, each --stats; scans; top-10 lists compared
    build_cudasw4 align makedb
    python3 benchmarks/versus_cudasw4.py --cudasw4 "$CUDASW4_SRC" --repeats "${REPEATS:-2}" \
        2>&1 | tee "$out/versus.log"
fi
if want twogpus; then
    # the whole command on one GPU and on two, a 741 M-residue database (2,000,000 proteins),
    # from fresh processes, taking turns; the outputs compared byte for byte
    queries=$(ls ../shared/data/allqueries.fasta .carry/allqueries.fasta 2>/dev/null | head -1)
    (cd benchmarks && python3 seeded_fasta.py /tmp/two.fa --sequences 2000000 \
        --plant "../$queries")
    python3 -m wavedp.cli makedb /tmp/two.fa -o /tmp/two.wdb
    python3 -m wavedp.cli search "$queries" /tmp/two.wdb --devices 0,1 -o /dev/null 2>/dev/null
    for turn in 1 2; do
        for devices in 0 0,1; do
            TIMEFORMAT="devices $devices, turn $turn: %R s"
            time python3 -m wavedp.cli search "$queries" /tmp/two.wdb --devices $devices \
                --explain -o /tmp/two-$devices.tsv 2> >(grep phases >&2)
        done
    done 2>&1 | tee "$out/twogpus.log"
    cmp /tmp/two-0.tsv /tmp/two-0,1.tsv && echo "outputs identical ($(wc -l < /tmp/two-0.tsv) lines)" \
        | tee -a "$out/twogpus.log"
    # where the two-GPU command's time goes, thread by thread
    python3 benchmarks/timeline.py --least 0.03 -- search "$queries" /tmp/two.wdb --devices 0,1 \
        --explain -o /tmp/two-t.tsv 2>&1 | tee "$out/twogpus_timeline.log" | tail -60
fi
if want timeline; then
    # thread-by-thread timelines of whole commands from fresh processes (benchmarks/timeline.py):
    # makedb of a Swiss-Prot-sized FASTA, then searches of one query and of 20 against it
    queries=$(ls ../shared/data/allqueries.fasta .carry/allqueries.fasta 2>/dev/null | head -1)
    [[ -f /tmp/sp.fa ]] || (cd benchmarks && python3 seeded_fasta.py /tmp/sp.fa \
        --sequences 570000 --plant "../$queries")
    python3 -c "import sys; r = open(sys.argv[1]).read().split('>')[1]; \
open('/tmp/one.fa', 'w').write('>' + r)" "$queries"
    python3 -m wavedp.cli makedb /tmp/sp.fa -o /tmp/sp.wdb 2>/dev/null  # the file cache warm
    {
        for turn in 1 2; do
            echo "## makedb, turn $turn"
            python3 benchmarks/timeline.py --least 0.03 -- makedb /tmp/sp.fa -o /tmp/sp.wdb
        done
        for qf in /tmp/one.fa "$queries"; do
            for how in "--score-only --stats none" "--stats none" ""; do
                # shellcheck disable=SC2086
                python3 -m wavedp.cli search "$qf" /tmp/sp.wdb --device gpu $how -o /dev/null
                echo "## search $(basename "$qf") $how"
                # shellcheck disable=SC2086
                python3 benchmarks/timeline.py --least 0.02 -- search "$qf" /tmp/sp.wdb \
                    --device gpu $how --explain -o /dev/null
            done
        done
    } 2>&1 | tee "$out/timeline.log"
fi
if want coldscan; then
    # where a fresh process's first GPU search spends its time beyond a warm one
    python3 benchmarks/cold_scan.py --profile 2>&1 | tee "$out/cold_scan.log"
fi
if want makedb; then
    # makedb of a Swiss-Prot-sized FASTA (570,000 sequences, 211 M residues), the whole
    # command from a fresh process, this tree against BASELINE where one is carried
    (cd benchmarks && python3 seeded_fasta.py /tmp/sp.fa --sequences 570000)
    ls -l /tmp/sp.fa
    base=${BASELINE:-.carry/base}
    if [[ -d $base ]]; then
        python3 -m pip install -q --no-index --no-deps --no-build-isolation \
            --target /tmp/base-site "$base" 2>&1 | tail -2
    fi
    # the wall clock and peak memory of a whole command, from a fresh process
    walled() { python3 -c 'import resource, subprocess, sys, time
t = time.perf_counter(); rc = subprocess.call(sys.argv[2:]); t = time.perf_counter() - t
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(f"{sys.argv[1]}: {t:.2f} s wall, peak RSS {peak:.0f} MiB, exit {rc}")' "$@"; }
    # CUDASW++4.0's makedb beside it where one is built (CUDASW4_SRC, or a binary carried in
    # .carry/cudasw4-bin from an earlier call's $OUT/cudasw4-bin)
    cudasw4_makedb=$(ls "$CUDASW4_SRC/makedb" .carry/cudasw4-bin/makedb 2>/dev/null | head -1)
    mkdir -p /tmp/cdb
    for who in cudasw4 this base cudasw4 this base cudasw4 this; do
        [[ $who == base && ! -d /tmp/base-site/wavedp ]] && continue
        [[ $who == cudasw4 && -z $cudasw4_makedb ]] && continue
        if [[ $who == cudasw4 ]]; then
            walled "CUDASW++4.0 makedb" sh -c "\"$cudasw4_makedb\" /tmp/sp.fa /tmp/cdb/db > /dev/null"
        elif [[ $who == base ]]; then
            PYTHONPATH=/tmp/base-site${PYTHONPATH:+:$PYTHONPATH} walled "base makedb" \
                python3 -m wavedp.cli makedb /tmp/sp.fa -o /tmp/sp-base.wdb
        else
            walled "this makedb" python3 -m wavedp.cli makedb /tmp/sp.fa -o /tmp/sp-this.wdb
        fi
    done 2>&1 | tee "$out/makedb_bench.log"
    # the folder of a database's arrays: the data folder its header names (format 2), else
    # the database's own folder (format 1)
    data_of() { python3 -c 'import json, os, sys; h = json.load(open(sys.argv[1] + "/header.json")); print(os.path.join(sys.argv[1], h.get("data", "")))' "$1"; }
    for f in residues.u8 offsets.i64 lengths.i32 ids.txt id_offsets.i64 titles.txt \
        title_offsets.i64 order.i32 runs.i64; do
        [[ -d /tmp/sp-base.wdb ]] && cmp "$(data_of /tmp/sp-base.wdb)/$f" \
            "$(data_of /tmp/sp-this.wdb)/$f" && echo "$f identical"
    done 2>&1 | tee -a "$out/makedb_bench.log"
    # MAKEDB_STAGES set: each stage alone (reading, parsing, writing) beside the whole build
    [[ -n ${MAKEDB_STAGES:-} ]] && python3 benchmarks/makedb_stages.py /tmp/sp.fa \
        --processes 8,16 --threads 6,16 --repeats 2 2>&1 | tee -a "$out/makedb_bench.log"
fi
if want terms; then
    # the predictor's terms one by one: launches split into host and kernel, and the
    # controlled launches (a lone long subject, order and occupancy, passes and grids)
    python3 benchmarks/predictor_terms.py --partitions dynamic2 --repeats 1 \
        --json "$out/terms.json" 2>&1 | tee "$out/terms.log"
fi
if want scaleout; then
    # every GPU of the machine against one: the CUDASW++ benchmark and the UniRef50 plan
    python3 benchmarks/scaleout.py 2>&1 | tee "$out/scaleout_bench.log"
fi
if want hits || want all; then
    # many-vs-many with non-intersecting hits: 1,000 x 10,000 proteins, fraction 0.8
    python3 benchmarks/many_vs_many.py --device both 2>&1 | tee "$out/hits_bench.log"
fi
if want polyadic || want all; then
    python3 benchmarks/polyadic.py 2>&1 | tee "$out/polyadic_bench.log"
fi
if want labquick; then
    # the traffic and energy experiments, small (the CLI end to end)
    wavedp lab traffic --quick --out /tmp/wavedp-lab 2>&1 | tail -3
    wavedp lab energy --quick --out /tmp/wavedp-lab 2>&1 | tail -3
    cp /tmp/wavedp-lab/*.md "$out/"
fi
anchor=()
if [[ -n ${CUDASW4_SRC:-} ]] && { want energy || want lab || want all; }; then
    build_cudasw4 align
    [[ -x $CUDASW4_SRC/align ]] && anchor=(--cudasw4 "$CUDASW4_SRC/align")
fi
if want energy; then
    # the energy experiment alone (micro-benchmarks, strategies, search, capped and peak)
    wavedp lab energy --out /tmp/wavedp-lab "${anchor[@]}" 2>&1 | tail -5
    cp /tmp/wavedp-lab/*.md /tmp/wavedp-lab/*.json "$out/"
fi
if want barriers; then
    # cluster-level first stage of the barrier against the flat ones
    python3 benchmarks/cluster_barrier.py 2>&1 | tee "$out/cluster_barrier.log"
fi
if want lab || want all; then
    # every experiment (traffic needs ncu, energy NVML)
    wavedp lab all --out /tmp/wavedp-lab "${anchor[@]}" 2>&1 | tail -5
    cp /tmp/wavedp-lab/report.md "$out/lab_report.md"
    tar czf "$out/lab.tgz" -C /tmp wavedp-lab
fi
# seeded NAME [ARGS...]: /tmp/NAME.fa and /tmp/NAME.wdb, 570,000 seeded proteins with the
# benchmark queries planted (ARGS: seeded_fasta.py's further options); $queries set
seeded() {
    local name=$1
    shift
    queries=$(ls ../shared/data/allqueries.fasta .carry/allqueries.fasta 2>/dev/null | head -1)
    [[ -d /tmp/$name.wdb ]] && return
    (cd benchmarks && python3 seeded_fasta.py "/tmp/$name.fa" --sequences 570000 \
        --plant "../$queries" "$@") >/dev/null
    python3 -m wavedp.cli makedb "/tmp/$name.fa" -o "/tmp/$name.wdb" >/dev/null 2>&1
}
if want onequery; then
    # one query alone on a warm Searcher (the service's path): its phases and a cProfile
    seeded serve
    # ONEQUERY_ARGS: its options (--pairs both --launches: the paired scan on and off)
    python3 benchmarks/one_query.py "$queries" /tmp/serve.wdb --device gpu ${ONEQUERY_ARGS:-} \
        2>&1 | tee "$out/one_query.log"
fi
if want profiles; then
    # a PSSM's scan against the matrix's and three iterations against one search, on a
    # Swiss-Prot-sized seeded database with eight planted copies of each query (30-75%
    # of positions redrawn: a family found round by round; benchmarks/profile_scan.py)
    seeded profiles --copies 8
    python3 benchmarks/profile_scan.py "$queries" /tmp/profiles.wdb --device gpu \
        --turns "${PROFILE_TURNS:-3}" 2>&1 | tee "$out/profile_scan.log"
fi
if want serve; then
    # the search service on a Swiss-Prot-sized seeded database: one query over HTTP, the thin
    # client and the local command beside CUDASW++4.0's one-query command, 64 clients for 60 s
    # against a Searcher in batches of 64 (benchmarks/serve.py)
    seeded serve
    anchor=()
    if [[ -d $CUDASW4_SRC ]]; then
        build_cudasw4 align makedb
        mkdir -p /tmp/serve-cdb
        "$CUDASW4_SRC/makedb" /tmp/serve.fa /tmp/serve-cdb/db >/dev/null 2>&1 \
            && anchor=(--cudasw4 "$CUDASW4_SRC" --cudasw4-db /tmp/serve-cdb/db)
    fi
    # SERVE_ARGS: more of its options
    python3 benchmarks/serve.py "$queries" /tmp/serve.wdb --device gpu --clients 64 \
        --seconds "${SECONDS_SERVE:-60}" "${anchor[@]}" ${SERVE_ARGS:-} 2>&1 \
        | tee "$out/serve_bench.log"
fi
if want pairs || want all; then
    # many pairs: GASAL2 and ADEPT built from their sources (.carry/gasal2, .carry/adept) when
    # present (PAIRS_ANCHORS=0: not built), then benchmarks/pairs.py (PAIRS_ARGS: its
    # options) beside them
    anchors=""
    if [[ -z ${PAIRS_BASE:-} && ${PAIRS_ANCHORS:-1} != 0 && -f scripts/pair_anchors.sh && ( -d .carry/gasal2 || -d .carry/adept ) ]]; then
        # each anchor that built runs (benchmarks/pair_anchors.py names one that did not)
        bash scripts/pair_anchors.sh build; anchors="--anchors /tmp/anchors/bin"
    fi
    if [[ -n ${PAIRS_BASE:-} ]]; then
        # this tree against earlier ones or variants (PAIRS_BASE: folders, separated by
        # spaces, each made by git archive COMMIT src benchmarks | tar -x -C DIR), in one run,
        # turns alternating (PAIRS_TURNS, default 2; the order reversed every other turn), no
        # anchors
        trees=($PAIRS_BASE this)
        for turn in $(seq "${PAIRS_TURNS:-2}"); do
            order=("${trees[@]}")
            (( turn % 2 == 0 )) && order=($(printf '%s\n' "${trees[@]}" | tac))
            for tree in "${order[@]}"; do
                echo "== ${tree##*/}, turn $turn"
                if [[ $tree != this ]]; then
                    PYTHONPATH=$tree/src${PYTHONPATH:+:$PYTHONPATH} \
                        python3 "$tree/benchmarks/pairs.py" ${PAIRS_ARGS:-}
                else
                    python3 benchmarks/pairs.py ${PAIRS_ARGS:-}
                fi
            done
        done 2>&1 | tee "$out/pairs_bench.log"
    else
        python3 benchmarks/pairs.py ${PAIRS_ARGS:-} $anchors 2>&1 | tee "$out/pairs_bench.log"
    fi
fi
if want pairshost; then
    # align --pairs with its aligner replaced by fixed results: the host's own work (reading,
    # encoding, SAM's header, writing) on this machine's cores (PAIRS_HOST_ARGS: its options)
    python3 benchmarks/pairs_host.py ${PAIRS_HOST_ARGS:-} 2>&1 | tee "$out/pairs_host.log"
fi
if want pairfills; then
    # the many-pairs engine's chunk writes timed piece by piece in its calls, then alone
    # (and --floor: the host's own rates on letters beyond its caches)
    for what in "dna score" "protein score" "dna cigar"; do
        python3 benchmarks/pair_fills.py --kind "${what% *}" --calls "${what#* }"
    done 2>&1 | tee "$out/pair_fills.log"
    python3 benchmarks/pair_fills.py --floor 2>&1 | tee -a "$out/pair_fills.log"
fi
if want bigpairs; then
    # the command's time and peak memory on BIG_PAIRS DNA pairs (default 10,000,000: a
    # million seeded pairs written ten times with distinct ids), SAM and PAF out; a warm-up
    # on the first 1,000 compiles the kernels
    big=${BIG_PAIRS:-10000000}
    dir=/tmp/bigpairs && mkdir -p $dir
    python3 benchmarks/pairs_data.py dna 1000000 $dir/q.fa $dir/t.fa --repeat $((big / 1000000))
    head -2000 $dir/q.fa > $dir/wq.fa && head -2000 $dir/t.fa > $dir/wt.fa
    opts=(--pairs --device gpu --match 1 --mismatch -4 --gap-open 7 --gap-extend 1)
    wavedp align $dir/wq.fa $dir/wt.fa "${opts[@]}" -o /dev/null
    for fmt in sam paf; do
        python3 -c "import resource, subprocess, sys, time; t = time.perf_counter(); \
r = subprocess.run(sys.argv[1:]); print('$big pairs, $fmt: %.2f s, exit %d, peak %.2f GiB' % \
(time.perf_counter() - t, r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20))" \
            wavedp align $dir/q.fa $dir/t.fa "${opts[@]}" --format $fmt -o $dir/out.$fmt
        wc -l < $dir/out.$fmt
    done 2>&1 | tee "$out/bigpairs.log"
fi
if want cpuscale; then
    # the CPU pairs with CIGARs against parasail on 2, 8 and 16 cores (taskset; wavedp's
    # threads as many), protein: how each scales with cores. CPU_TREE: another tree's src
    # and benchmarks (git archive BRANCH src benchmarks | tar -x -C DIR) run instead;
    # CPUSCALE_ARGS: more options of its benchmarks/pairs.py (--int16: on and off in turns)
    tree=${CPU_TREE:-.}
    for k in ${CPUS:-2 8 16}; do
        PYTHONPATH=$tree/src${PYTHONPATH:+:$PYTHONPATH} NUMBA_NUM_THREADS=$k \
            taskset -c 0-$((k - 1)) python3 "$tree/benchmarks/pairs.py" --device cpu \
            --parasail 20000 --count 20000 --kind protein --modes local --check 0 --repeats 2 \
            ${CPUSCALE_ARGS:-} 2>&1 | grep "cpu cigar"
    done 2>&1 | tee "$out/cpuscale.log"
fi
if want ncupairs; then
    # Nsight Compute on many pairs (DNA, NCU_PAIRS of them, default 200,000, local): the
    # sweeps (score-only, then with the direction bits) and the traceback; counters read with
    # the clocks left alone (a call goes in at least four chunks)
    sections="--section SpeedOfLight --section LaunchStats --section Occupancy
        --section WarpStateStats --section MemoryWorkloadAnalysis --section SchedulerStats"
    bench=(benchmarks/pairs.py --kind dna --count "${NCU_PAIRS:-200000}" --modes local
        --repeats 1 --check 0)
    ncu --clock-control none -k regex:many_pairs16 --launch-skip 1 --launch-count 5 \
        $sections python3 "${bench[@]}" > "$out/ncu_sweep.txt" 2>&1
    ncu --clock-control none -k regex:trace_ --launch-skip 1 --launch-count 1 \
        $sections python3 "${bench[@]}" > "$out/ncu_trace.txt" 2>&1
    grep -E "many_pairs16|trace_|Duration|Registers|Achieved Occupancy|Theoretical Occ|Issue Slots Busy|No Eligible|Memory Throughput|DRAM Throughput|Stall" \
        "$out/ncu_sweep.txt" "$out/ncu_trace.txt" | head -80
fi
if want bench || want all; then
    python3 benchmarks/gpu_align.py 2>&1 | tee "$out/gpu_bench.log"
fi
exit "$status"

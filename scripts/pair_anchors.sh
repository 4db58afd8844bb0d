#!/usr/bin/env bash
# Anchors for the many-pairs benchmark: GASAL2 (its test_prog) and ADEPT (its multi-GPU examples,
# run on one GPU), built from their public sources in .carry/gasal2 and .carry/adept (exported
# from github.com/nahmedraja/GASAL2 and github.com/mgawan/ADEPT). Run from the repository root:
#   bash scripts/pair_anchors.sh build
# Sources are copied to $ANCHORS (default /tmp/anchors) and patched there, never in .carry:
# CUDA 13 / sm_90 build fixes, and ADEPT's examples get wavedp's scoring (their scores are
# compile-time constants), length limits fitted to the workload, a warm-up and a timer.
# Programs end up in $ANCHORS/bin (benchmarks/pair_anchors.py runs them), limits in
# $ANCHORS/bin/anchors.env, the whole build log in $OUT/anchors_build.log.
set -uo pipefail
out=${OUT:-/tmp/wavedp-out}
dest=${ANCHORS:-/tmp/anchors}
cuda=${CUDA_HOME:-/usr/local/cuda}
arch=${CUDA_ARCH:-90}
gasal_qlen=${GASAL2_MAX_QUERY_LEN:-160}        # reads (queries), padded to 8, must fit
gasal_batch=${GASAL2_STREAM_BATCH:-262144}     # pairs per kernel launch; stock test_prog: 5000
read -r dna_ref dna_que <<< "${ADEPT_DNA_LIMITS:-320 160}"     # stock: 1200 300
read -r aa_ref aa_que <<< "${ADEPT_PROTEIN_LIMITS:-320 320}"  # stock: 1200 600
mkdir -p "$out" "$dest/bin"
log=$out/anchors_build.log
export PATH="$cuda/bin:$PATH"

say() { echo "$*" | tee -a "$log"; }
fail() { say "FAILED: $*"; return 1; }

build_gasal2() {
    local src=$dest/gasal2
    rm -rf "$src" && cp -r .carry/gasal2 "$src" || fail "copy .carry/gasal2" || return 1
    cd "$src" || return 1
    # C++17 (CUDA 13's headers), no -Werror (new compilers warn), `register` is gone in C++17
    sed -i 's/-std=c++11/-std=c++17/g; s/ -Xptxas -Werror//g; s/ -Werror//g' \
        Makefile test_prog/Makefile
    sed -i 's/\bregister \(u\?int32_t\)/\1/g' src/kernels/*.h
    # static libgasal.a before the shared cudart it needs; find cudart at run time
    sed -i 's/-lcudart -lgasal/-lgasal -lcudart -Wl,-rpath,$(CUDA_LD_LIBRARY)/' \
        test_prog/Makefile
    # test_prog sizes its buffers from the *last* query's length: use the longest one
    sed -i 's/int maximum_sequence_length_query = MAX((query_seqs.back()).length(), 0);/int maximum_sequence_length_query = 0; for (auto \&s_ : query_seqs) maximum_sequence_length_query = MAX((int) s_.length(), maximum_sequence_length_query);/' \
        test_prog/test_prog.cpp
    # one thread per pair: 5000 pairs a launch leave an H200 nearly idle
    sed -i "s/^#define STREAM_BATCH_SIZE 5000/#define STREAM_BATCH_SIZE $gasal_batch/" \
        test_prog/test_prog.cpp
    grep -q 'for (auto &s_ : query_seqs)' test_prog/test_prog.cpp \
        && grep -q "^#define STREAM_BATCH_SIZE $gasal_batch" test_prog/test_prog.cpp \
        || fail "gasal2 patch of test_prog.cpp" || return 1
    bash ./configure.sh "$cuda" >> "$log" 2>&1 || fail "gasal2 configure.sh $cuda" || return 1
    make GPU_SM_ARCH=sm_$arch MAX_QUERY_LEN=$gasal_qlen N_CODE=0x4E >> "$log" 2>&1 \
        || fail "gasal2 make (libgasal.a)" || return 1
    make -C test_prog >> "$log" 2>&1 || fail "gasal2 make -C test_prog" || return 1
    ln -sf "$src/test_prog/test_prog.out" "$dest/bin/gasal2_test_prog"
}

# ADEPT example $1 (examples/$1/$1.cpp): set scoring and limits, warm up, time the alignment
patch_adept_example() {
    local file=examples/$1/$1.cpp ref=$2 que=$3 open=$4
    sed -i -E "s/(MAX_REF_LEN += +)[0-9]+;/\1$ref;/; s/(MAX_QUERY_LEN += +)[0-9]+;/\1$que;/
        s/(short MATCH += +)-?[0-9]+;/\11;/; s/(short MISMATCH += +)-?[0-9]+;/\1-4;/
        s/(short GAP_OPEN += +)-?[0-9]+;/\1-$open;/; s/(short GAP_EXTEND += +)-?[0-9]+;/\1-1;/" \
        "$file"
    # one small multi_gpu call first (CUDA context, module loading), then time the real one
    sed -i -E 's#^([[:space:]]*)auto all_results = ADEPT::multi_gpu\(ref_sequences, que_sequences, (.*)$#\1{ size_t n_ = std::min<size_t>(64, ref_sequences.size()); std::vector<std::string> wr_(ref_sequences.begin(), ref_sequences.begin() + n_), wq_(que_sequences.begin(), que_sequences.begin() + n_); ADEPT::multi_gpu(wr_, wq_, \2 }\n\1auto t0_ = std::chrono::steady_clock::now();\n&\n\1std::cout << "ADEPT_ALIGN_SECONDS " << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count() << std::endl;#' \
        "$file"
    grep -q ADEPT_ALIGN_SECONDS "$file" && grep -q "GAP_OPEN *= *-$open;" "$file" \
        || fail "adept patch of $file"
}

build_adept() {
    local src=$dest/adept
    rm -rf "$src" && cp -r .carry/adept "$src" || fail "copy .carry/adept" || return 1
    cd "$src" || return 1
    sed -i -E 's/CUDA_ARCHITECTURES 50 60 70 80/CUDA_ARCHITECTURES '"$arch"'/
        s/CMAKE_CUDA_STANDARD 11/CMAKE_CUDA_STANDARD 17/' adept/CMakeLists.txt
    grep -q "CUDA_ARCHITECTURES $arch" adept/CMakeLists.txt || fail "adept arch patch"
    patch_adept_example multi_gpu "$dna_ref" "$dna_que" 7 || return 1
    patch_adept_example multigpu_protein "$aa_ref" "$aa_que" 11 || return 1
    patch_adept_example multigpu_protein_scoreonly "$aa_ref" "$aa_que" 11 || return 1
    cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTS=OFF \
        -DCMAKE_CUDA_ARCHITECTURES="$arch" -DCMAKE_CUDA_COMPILER="$cuda/bin/nvcc" \
        >> "$log" 2>&1 || fail "adept cmake" || return 1
    cmake --build build -j "$(nproc)" --target multi_gpu multigpu_protein \
        multigpu_protein_scoreonly >> "$log" 2>&1 || fail "adept build" || return 1
    ln -sf "$src/build/examples/multi_gpu/multi_gpu" "$dest/bin/adept_dna"
    ln -sf "$src/build/examples/multigpu_protein/multigpu_protein" "$dest/bin/adept_protein"
    ln -sf "$src/build/examples/multigpu_protein_scoreonly/multigpu_protein_scoreonly" \
        "$dest/bin/adept_protein_scores"
}

case ${1:-build} in
build)
    : > "$log"
    cat > "$dest/bin/anchors.env" <<EOF
gasal2_max_query_len=$gasal_qlen
gasal2_stream_batch=$gasal_batch
adept_dna_max_ref=$dna_ref
adept_dna_max_query=$dna_que
adept_protein_max_ref=$aa_ref
adept_protein_max_query=$aa_que
EOF
    status=0
    for tool in gasal2 adept; do
        say "== $tool: building in $dest/$tool"
        start=$SECONDS
        if (build_$tool); then
            say "$tool: built in $((SECONDS - start)) s"
        else
            say "$tool: FAILED after $((SECONDS - start)) s (see $log)"
            status=1
        fi
    done
    ls -l "$dest/bin" | tee -a "$log"
    exit $status
    ;;
*)
    echo "usage: bash scripts/pair_anchors.sh build" >&2
    exit 2
    ;;
esac

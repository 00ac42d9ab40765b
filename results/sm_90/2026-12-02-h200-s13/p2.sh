#!/usr/bin/env bash
# Session 13, probe 2 (issue #13): the wgmma k loop with its per-lane LDS read addresses held
# in registers, whole k-tiles without a per-step range test and the exact decode chosen once
# per CTA. The [gpu] exec suite (correctness), the backbone's default at M = 1...4096 and the
# SASS instruction counts of the default stage kernels (cuobjdump of the code cache).
# Lands in OUT/p2.tgz. Usage: p2.sh BUILD OUT
set -uo pipefail
b=${1:?build}; out=${2:?out}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
work=/tmp/p2; rm -rf $work; mkdir -p $work; cache=/tmp/mt-cache-p2
here=$(dirname "$0")
s=$SECONDS
timeout 240 $b/bin/moetune_test_exec "[gpu]" > $work/exec_gpu.log 2>&1
echo "exec [gpu]: exit $?, $((SECONDS-s)) s"; grep -E "test cases|FAILED|failed" $work/exec_gpu.log | head
s=$SECONDS
timeout 150 $b/bin/moe-tune bench --roofline --shape 5120,640,384,6 --m 1 8 64 512 4096 --samples 7 --cache-dir $cache \
  --markdown $work/bench_backbone.md > $work/bench_backbone.log 2>&1
echo "bench backbone: exit $?, $((SECONDS-s)) s"; grep -E "^ +[0-9]+ " $work/bench_backbone.log
timeout 100 $b/bin/moe-tune bench --roofline --shape 5120,2304,96,6 --m 64 512 --samples 7 --cache-dir $cache \
  --markdown $work/bench_ep.md > $work/bench_ep.log 2>&1
echo "bench ep: exit $?"; grep -E "^ +[0-9]+ " $work/bench_ep.log
# SASS of the default wgmma kernels: per opcode, and the instruction count of the hottest loop.
$b/bin/moe-tune compile --arch sm_90 --space $here/p2_space.json --dtype a16w4 --cache-dir $work/sass_cache > $work/compile.log 2>&1
CUOBJDUMP=$(command -v cuobjdump || ls /usr/local/cuda/bin/cuobjdump 2>/dev/null | head -1)
for f in $(find $work/sass_cache -name "*.bin"); do
  python3 -c "import sys; d=open(sys.argv[1],'rb').read(); i=d.find(b'\x7fELF'); open(sys.argv[2],'wb').write(d[i:])" $f $f.cubin
  $CUOBJDUMP -sass $f.cubin > $f.sass 2>&1
  name=$(grep -m1 -o "Function : [^ ]*" $f.sass); n=$(grep -cE "^ +/\*[0-9a-f]{4}\*/" $f.sass)
  echo "$name: $n SASS instructions"
done | tee $work/sass_sizes.txt
mkdir -p $work/sass; for f in $(find $work/sass_cache -name "*.sass"); do cp $f $work/sass/; done; xz -9 $work/sass/*
rm -rf $work/sass_cache
tar czf "$out/p2.tgz" -C $work .

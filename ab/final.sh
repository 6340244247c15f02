#!/usr/bin/env bash
# Scratch (not part of the project): the tied head's loss change — build, its CUDA
# test, then the three training rows against eager and torch.compile with 3 s windows.
set -uo pipefail
export DVFSLAB_READ_ONLY=1
T0=$(date +%s)
mkdir -p /tmp/r
q="--query-gpu=name,driver_version,clocks.applications.graphics,clocks.applications.memory,power.limit,persistence_mode,compute_mode --format=csv"
nvidia-smi $q > /tmp/r/settings_before.txt
rows=resnet50/train,llama/train,gpt2_small/train,bert_base/train
python3 bench/device/torch_eager.py --warm-compile-only --compile --precision bf16 --only $rows --out /tmp/r \
  --jobs 4 --warm-budget 200 > /tmp/r/compile_warm.log 2>&1 &
warm=$!
DVFSLAB_TORCH_TESTS=1 source bench/device/prepare.sh > /tmp/r/build.log 2>&1 || { tail -60 /tmp/r/build.log; kill $warm; exit 1; }
set +e
echo "built after $(( $(date +%s) - T0 )) s"
build/device/tests/dvfslab_torch_tests --gtest_filter='TiedHead*:*TorchModelTraining*' > /tmp/r/tests.txt 2>&1
echo "tests rc $? after $(( $(date +%s) - T0 )) s"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]|Failure" /tmp/r/tests.txt | head
wait $warm
echo "warm-up done after $(( $(date +%s) - T0 )) s"
python3 bench/device/torch_eager.py --dvfslab "$DVFSLAB" --out /tmp/r --compile --precision bf16 --seconds 3 --only $rows \
  --stop-at $(( T0 + ${STOP_AFTER:-470} )) > /tmp/r/run.log 2>&1
echo "table rc $? after $(( $(date +%s) - T0 )) s"
grep "^|" /tmp/r/torch_vs_compile.md | cut -d'|' -f2-3,8-13
nvidia-smi $q > /tmp/r/settings_after.txt
diff /tmp/r/settings_before.txt /tmp/r/settings_after.txt && echo "settings unchanged"
tar czf "$OUT/r.tgz" -C /tmp/r .

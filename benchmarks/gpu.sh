#!/usr/bin/env bash
# The GPU run, in one command, for a machine with an NVIDIA GPU and its driver:
#   1. installs CuPy (requirements-gpu.txt) and, if no CUDA build of PyTorch is importable, PyTorch
#      from the package index (its default Linux wheel is a CUDA build; it is only the reference);
#   2. runs the `gpu`-marked tests, refusing to count a skip as a pass (MINISHARE_REQUIRE_GPU=1);
#   3. runs the whole test suite on CuPy (MINISHARE_BACKEND=cupy);
#   4. times one ALBERT pre-training step against PyTorch CUDA at the tiny and the ALBERT-base
#      shape (B = 8, T = 128) and prints the ratios.
#
#   bash benchmarks/gpu.sh                # everything; logs in runs/gpu/
#   bash benchmarks/gpu.sh --no-install   # CuPy and PyTorch are installed already (offline machine)
#   bash benchmarks/gpu.sh --quick        # skip step 3 (the whole suite takes longest)
set -euo pipefail
cd "$(dirname "$0")/.."
install=1 full_suite=1
for arg in "$@"; do
    case "$arg" in
        --no-install) install=0 ;;
        --quick) full_suite=0 ;;
        *) echo "gpu.sh: unknown option $arg (options: --no-install, --quick)" >&2; exit 2 ;;
    esac
done
out=${MINISHARE_GPU_OUT:-runs/gpu}
mkdir -p "$out"
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"

if ! command -v nvidia-smi >/dev/null || ! nvidia-smi >/dev/null 2>&1; then
    echo "gpu.sh: no working nvidia-smi: this machine has no NVIDIA GPU or driver; nothing was run" >&2
    exit 2
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"

if [ "$install" = 1 ]; then
    python -m pip install --quiet -r requirements-gpu.txt
    if ! python -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
        python -m pip install --quiet torch
    fi
fi
python - <<'PY' | tee -a "$out/gpu.txt"
import sys
try:
    import cupy
except ImportError as error:
    sys.exit(f"gpu.sh: CuPy does not import ({error}); pip install -r requirements-gpu.txt")
props = cupy.cuda.runtime.getDeviceProperties(0)
print(f"CuPy {cupy.__version__}, CUDA runtime {cupy.cuda.runtime.runtimeGetVersion()}, "
      f"device 0: {props['name'].decode()}")
try:
    import torch
    print(f"PyTorch {torch.__version__}, CUDA available: {torch.cuda.is_available()}")
except ImportError:
    print("PyTorch not installed: the benchmark prints minishare's times without a ratio")
PY

# a failing test does not stop the run: the benchmark still runs, and the exit status says it failed
status=0
echo "== gpu-marked tests" | tee "$out/tests.txt"
MINISHARE_REQUIRE_GPU=1 python -m pytest -q -m gpu 2>&1 | tee -a "$out/tests.txt" || status=1
if [ "$full_suite" = 1 ]; then
    echo "== the whole suite on CuPy" | tee -a "$out/tests.txt"
    MINISHARE_BACKEND=cupy python -m pytest -q 2>&1 | tee -a "$out/tests.txt" || status=1
fi

echo "== one pre-training step, minishare on CuPy vs PyTorch on CUDA" | tee "$out/step_time.txt"
# both shapes (tiny, and ALBERT-base at B = 8, T = 128) in one run; peak memory is measured on CPUs only
MINISHARE_BACKEND=cupy python benchmarks/step_time.py --steps 20 --warmup 3 2>&1 | tee -a "$out/step_time.txt"

echo
echo "== summary (ratio = minishare / PyTorch; below 1.0 minishare is faster); logs in $out/"
grep -E "^(  all-shared|  not-shared|== )" "$out/step_time.txt" || true
grep -E "(passed|failed|error)" "$out/tests.txt" | tail -n 2
if [ "$status" != 0 ]; then
    echo "gpu.sh: some tests failed; see $out/tests.txt" >&2
fi
exit "$status"

#!/usr/bin/env bash
# The whole GPU measurement as one script, for a lent NVIDIA GPU (H200 expected).
#
#   bash validation/run_on_gpu.sh            # writes under $OUT (default results/gpu-run)
#
# Everything lands in one folder, $OUT/<device> (DEVICE_DIR, default h200): measurements.csv,
# provenance.json, ceilings.json, diagnostics.json, skipped.json, nvidia-smi.txt, env.txt, run.log.
# Copy that folder to validation/data/<device>/ and commit it. REPORT_OUT (default $DEST/report) is
# where the closing report goes.
#
# The image has numba and numba-cuda; archsim's own dependencies (simpy, pydantic, pint) are not
# needed to measure, but are installed from wheels in .whl/ when present and missing, so the report can
# run at the end. Nothing already importable is reinstalled. Budget: about 6 minutes in all.
set -uo pipefail
cd "$(dirname "$0")/.."

OUT_ROOT="${OUT:-results/gpu-run}"
DEST="$OUT_ROOT/${DEVICE_DIR:-h200}"
mkdir -p "$DEST"
exec > >(tee "$DEST/run.log") 2>&1
echo "run_on_gpu: $(date -u +%FT%TZ) -> $DEST"

nvidia-smi -q > "$DEST/nvidia-smi.txt" 2>&1 || echo "nvidia-smi not available"

missing=$(python - <<'PY'
import importlib.util
print(" ".join(m for m in ("simpy", "pydantic", "pint", "pynvml") if importlib.util.find_spec(m) is None))
PY
)
if [ -n "$missing" ] && compgen -G ".whl/*.whl" > /dev/null; then
  echo "installing from .whl/ for: $missing"
  python -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl || echo "wheel install failed"
  export PYTHONPATH="/tmp/site${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"

python - > "$DEST/env.txt" 2>&1 <<'PY'
import importlib, platform
print("python", platform.python_version())
for m in ("numpy", "scipy", "numba", "numba_cuda", "cupy", "simpy", "pydantic", "pint", "matplotlib", "pynvml"):
    try:
        print(m, getattr(importlib.import_module(m), "__version__", "?"))
    except Exception as exc:  # report, do not stop: the driver skips what it cannot import
        print(m, "MISSING", type(exc).__name__, exc)
PY
cat "$DEST/env.txt"

# Kernels first (no new case starts after 300 s), then the two ceilings. While each case is timed,
# validation.nvml samples board power and SM clock (pynvml, package nvidia-ml-py; skipped without it)
# and diagnostics.json records them with the energy per run (mean power x median run time).
timeout 390 python -m validation measure --target gpu --sizes full --out "$DEST" --deadline-s 300
rc=$?
echo "measure exit status: $rc"

python - "$DEST/diagnostics.json" <<'PY' || true
import json, sys
diag = json.load(open(sys.argv[1]))
cases = diag.get("cases", diag) if isinstance(diag, dict) else {}
n = sum(1 for v in cases.values() if isinstance(v, dict) and v.get("nvml"))
print(f"nvml: board power sampled for {n} of {len(cases)} cases")
PY

# The report needs archsim's engine; its result is informative here, the commit decides.
timeout 60 python -m validation report --data "$OUT_ROOT" --out "${REPORT_OUT:-$DEST/report}" || echo "report exit status: $?"
exit "$rc"

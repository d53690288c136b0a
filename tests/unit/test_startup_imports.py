"""A first estimate in a fresh process imports only what it uses: pandas (~0.5 s), dask and pint stay
unimported for a roofline estimate, the same under a software profile (which prices host work on a
System's CPU) and a discrete-event run (``benchmarks/bench_startup.py`` times the first one)."""

import os
import subprocess
import sys
from pathlib import Path

import archsim


def test_first_estimates_leave_pandas_dask_and_pint_unimported() -> None:
    code = ("import sys, archsim\n"
            "gpu = archsim.load_preset('gpu/v100-sxm2-16gb')\n"
            "dgx = archsim.load_preset('system/dgx-a100')\n"
            "archsim.estimate(archsim.zoo.resnet50(batch=32, dtype='fp16'), gpu)\n"
            "archsim.estimate(archsim.zoo.get('mlp', batch=8), dgx, software='pytorch-eager')\n"
            "archsim.estimate(archsim.zoo.get('mlp', batch=8), dgx, engine='des')\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'pandas', 'dask', 'pint'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(Path(archsim.__file__).parents[1])}).stdout
    assert out.strip() == "[]"

"""Host instructions of one ImageNet training sample in a torchvision/Pillow input pipeline.

The software profiles' ``data_loading.sample_instructions`` is a single count; this module is the
derivation behind the PyTorch profiles' number, so it can be re-derived (and re-derived for another
image size or crop) instead of copied. Every rate is a published single-thread measurement on a named
CPU, turned into cycles per unit of work at the clock the measurement names, and cycles are counted
as instructions at the profiles' IPC of 1 (the same unit choice as the dispatch work): on the host
they cost ``instructions / (min(host_ipc, issue_width) x clock_hz)``.

The sample, as DeepLearningExamples' ResNet-50 (PyTorch 21.03, ``data_backend: pytorch``) prepares it
in a DataLoader worker (``image_classification/dataloaders.py``: ImageFolder, RandomResizedCrop(224),
RandomHorizontalFlip, ``fast_collate`` to uint8; the float conversion runs on the GPU):

1. **decode** the JPEG with Pillow: 577 images/s on one thread of a Xeon Platinum 8581C at its
   3.1 GHz all-core turbo on the ImageNet validation JPEGs (Iglovikov and Kosarevsky,
   arXiv:2605.08731v2; github.com/ternaus/imread_benchmark) = 5.37 M cycles per image;
2. **crop** (``Image.crop`` copies the region) and **resize** to 224 x 224 with Pillow's bilinear
   filter: a separable convolution, horizontal pass then vertical, whose support grows with the
   downscale factor (``libImaging/Resample.c``: ``support = 1 x max(in / out, 1)``, so an output pixel
   reads ``2 x max(in / out, 1)`` input pixels); per filter tap and per output pixel of each pass,
   from two rows of pillow-perf on an AWS c4.large (Xeon E5-2666 v3, Haswell, 2.90 GHz), Pillow
   4.3.0, 2560 x 1600 RGB: to 320 x 200 bilinear 16.706 ms, to 2048 x 1280 bilinear 44.537 ms
   (``docs/src/data/c4.large.json`` in github.com/python-pillow/pillow-perf at 0b08ea4f): two
   equations, two unknowns, :data:`PILLOW_CYCLES_PER_TAP` and :data:`PILLOW_CYCLES_PER_OUTPUT`;
3. the **flip** (``FLIP_LEFT_RIGHT``, half of the samples) and two **copies** of the 224 x 224 result
   (``np.asarray`` of the image, then ``fast_collate``'s copy into the batch tensor), at pillow-perf's
   Pillow 4.3.0 ``Flop`` (3.011 ms) and ``Flip`` (2.964 ms, a row-by-row copy) of the same
   2560 x 1600 image on the same core.

The crop of ``RandomResizedCrop`` (torchvision: scale uniform in (0.08, 1) of the image's area, log
aspect ratio uniform in (log 3/4, log 4/3), up to 10 tries for a crop that fits, else the whole image
(centre crop at a clamped ratio)) is averaged by midpoint quadrature over scale and log-ratio, so the
result is deterministic. What is not priced (no per-image figure found): the file read, the Python
of ``Dataset.__getitem__`` and the transforms, the DataLoader's inter-process queue and the pinned-
memory thread.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["PILLOW_CYCLES_PER_TAP", "PILLOW_CYCLES_PER_OUTPUT", "PILLOW_COPY_CYCLES_PER_PIXEL",
           "PILLOW_FLIP_CYCLES_PER_PIXEL", "PILLOW_DECODE_CYCLES_PER_IMAGE", "IMAGENET_MEAN_SIZE",
           "resize_taps_outputs", "resize_cycles", "random_resized_crop_cycles", "training_sample_instructions"]

_C4_HZ = 2.90e9  # Xeon E5-2666 v3 @ 2.90GHz, the clock pillow-perf's c4.large results name
_PERF_SRC = (2560, 1600)  # pillow-perf's test image

IMAGENET_MEAN_SIZE = (469, 387)
"""Mean width x height of the ILSVRC images (469 x 387 pixels: image-net.org/challenges/LSVRC/2014,
as quoted in github.com/andreas-schliebitz/open-images-v7-100 README and elsewhere)."""

PILLOW_DECODE_CYCLES_PER_IMAGE = 3.1e9 / 577
"""Pillow's JPEG decode of one ImageNet JPEG: 577 images/s on one Xeon 8581C thread at 3.1 GHz."""


def resize_taps_outputs(src: tuple[float, float], dst: tuple[float, float]) -> tuple[float, float]:
    """(filter taps, output pixels) of Pillow's bilinear resize of ``src`` = (w, h) to ``dst``.

    Horizontal pass (when the width changes): ``h_src x w_dst`` outputs, ``2 max(w_src / w_dst, 1)``
    taps each; then the vertical pass (when the height changes): ``w_dst x h_dst`` outputs,
    ``2 max(h_src / h_dst, 1)`` taps each (``libImaging/Resample.c``, bilinear support 1).
    """
    (ws, hs), (wd, hd) = src, dst
    taps = outputs = 0.0
    if ws != wd:
        taps += hs * wd * 2.0 * max(ws / wd, 1.0)
        outputs += hs * wd
    if hs != hd:
        taps += wd * hd * 2.0 * max(hs / hd, 1.0)
        outputs += wd * hd
    return taps, outputs


def _per_tap_and_output() -> tuple[float, float]:
    # pillow-perf, c4.large, Pillow 4.3.0, 2560x1600 RGB, bilinear: -> 320x200 in 0.0167059898376 s,
    # -> 2048x1280 in 0.0445370674133 s; solve cycles = a x taps + b x outputs for (a, b)
    rows = [((320, 200), 0.0167059898376), ((2048, 1280), 0.0445370674133)]
    m = np.array([resize_taps_outputs(_PERF_SRC, dst) for dst, _ in rows])
    cycles = np.array([t * _C4_HZ for _, t in rows])
    a, b = np.linalg.solve(m, cycles)
    return float(a), float(b)


PILLOW_CYCLES_PER_TAP, PILLOW_CYCLES_PER_OUTPUT = _per_tap_and_output()
"""Cycles of Pillow 4.3.0's bilinear resample per filter tap (4.61) and per output pixel of a pass
(10.38) on a Haswell core (pillow-perf, c4.large; see the module doc). The same pair puts the table's
other two rows at 13.3 ms (measured 10.3, a 98x downscale) and 186 ms (207, a 2.14x upscale)."""

PILLOW_COPY_CYCLES_PER_PIXEL = 0.00296401977539 * _C4_HZ / (_PERF_SRC[0] * _PERF_SRC[1])
"""Cycles per pixel of a row-by-row image copy: pillow-perf ``Flip`` (``FLIP_TOP_BOTTOM``), Pillow
4.3.0, 2560 x 1600 RGB on the c4.large, 2.964 ms (2.10 cycles per pixel)."""

PILLOW_FLIP_CYCLES_PER_PIXEL = 0.00301098823547 * _C4_HZ / (_PERF_SRC[0] * _PERF_SRC[1])
"""Cycles per pixel of ``FLIP_LEFT_RIGHT``: pillow-perf ``Flop``, same image and core, 3.011 ms (2.13)."""


def resize_cycles(src: tuple[float, float], dst: tuple[float, float]) -> float:
    """Cycles (= instructions at IPC 1) of Pillow's bilinear resize of ``src`` to ``dst`` (w, h)."""
    taps, outputs = resize_taps_outputs(src, dst)
    return PILLOW_CYCLES_PER_TAP * taps + PILLOW_CYCLES_PER_OUTPUT * outputs


def _fallback_crop(width: float, height: float, ratio: tuple[float, float]) -> tuple[float, float]:
    # torchvision RandomResizedCrop.get_params after 10 failed tries: a centre crop at the clamped ratio
    r = width / height
    if r < ratio[0]:
        return width, width / ratio[0]
    if r > ratio[1]:
        return height * ratio[1], height
    return width, height


def random_resized_crop_cycles(width: float, height: float, size: int = 224,
                               scale: tuple[float, float] = (0.08, 1.0),
                               ratio: tuple[float, float] = (3 / 4, 4 / 3), grid: int = 200) -> float:
    """Expected cycles of torchvision's ``RandomResizedCrop(size)`` on a ``width x height`` PIL image:
    the crop's copy plus Pillow's bilinear resize of it to ``size x size`` (see the module doc).

    Midpoint quadrature, ``grid`` points over the area scale and ``grid // 5`` over the log ratio; a
    try succeeds when the crop fits (probability ``p``), so the crop is the fitting crops' mean with
    probability ``1 - (1 - p)^10`` and the fallback crop otherwise.
    """
    s = scale[0] + (np.arange(grid) + 0.5) / grid * (scale[1] - scale[0])
    n_r = max(grid // 5, 1)
    lo, hi = math.log(ratio[0]), math.log(ratio[1])
    r = lo + (np.arange(n_r) + 0.5) / n_r * (hi - lo)
    ss, rr = np.meshgrid(s, r)
    area = width * height * ss
    w, h = np.sqrt(area * np.exp(rr)), np.sqrt(area / np.exp(rr))
    fits = (w <= width) & (h <= height)

    def cost(cw: np.ndarray, ch: np.ndarray) -> np.ndarray:
        dst = float(size)
        horiz = np.where(cw != dst, ch * dst * 2.0 * np.maximum(cw / dst, 1.0), 0.0)
        vert = np.where(ch != dst, dst * dst * 2.0 * np.maximum(ch / dst, 1.0), 0.0)
        outs = np.where(cw != dst, ch * dst, 0.0) + np.where(ch != dst, dst * dst, 0.0)
        return (PILLOW_COPY_CYCLES_PER_PIXEL * cw * ch + PILLOW_CYCLES_PER_TAP * (horiz + vert)
                + PILLOW_CYCLES_PER_OUTPUT * outs)

    fw, fh = _fallback_crop(width, height, ratio)
    fallback = float(cost(np.asarray(fw), np.asarray(fh)))
    p = float(fits.mean())
    if p == 0.0:
        return fallback
    q = (1.0 - p) ** 10
    return (1.0 - q) * float(cost(w[fits], h[fits]).mean()) + q * fallback


def training_sample_instructions(width: float = IMAGENET_MEAN_SIZE[0], height: float = IMAGENET_MEAN_SIZE[1],
                                 size: int = 224) -> dict[str, float]:
    """Host instructions (IPC 1) of one training sample, by step: decode, RandomResizedCrop, flip
    (half the samples), the two copies of the ``size x size`` result; ``"total"`` sums them."""
    out = {
        "decode": PILLOW_DECODE_CYCLES_PER_IMAGE,
        "random_resized_crop": random_resized_crop_cycles(width, height, size),
        "flip": 0.5 * size * size * PILLOW_FLIP_CYCLES_PER_PIXEL,
        "copies": 2.0 * size * size * PILLOW_COPY_CYCLES_PER_PIXEL,
    }
    out["total"] = sum(out.values())
    return out

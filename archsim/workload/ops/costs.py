"""Per-element cost of elementwise functions: the one table every engine reads.

Each entry gives, per output element, the FLOP by class (``vector`` adds/multiplies/compares,
``special`` SFU evaluations, each counted 1 FLOP), the number of full-size inputs, outputs and the
function that computes its gradient. Counts are derived term by term from the formula in the note;
transcendental functions follow the CUDA fast-math implementations (PTX ISA 8.x, ``ex2.approx``,
``lg2.approx``, ``rcp.approx``, ``rsqrt.approx``, ``tanh.approx``): ``exp(x) = ex2(x * log2 e)`` is
1 vector + 1 special, ``log(x) = lg2(x) * ln 2`` is 1 vector + 1 special, a division is a
reciprocal (special) and a multiply (vector).

Binary add-like functions have a *pass-through* gradient: ``dA = dB = dy`` needs no kernel (the
framework aliases the buffer), except that a broadcast operand's gradient is reduced over the
broadcast axes.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ElementwiseCost", "ELEMENTWISE_COSTS"]


@dataclass(frozen=True)
class ElementwiseCost:
    """Cost of one function per output element.

    Attributes:
        n_inputs: full-size input tensors read (a gradient function counts dy and saved tensors).
        vector: vector-ALU FLOP per element.
        special: SFU evaluations per element.
        n_outputs: output tensors written.
        mask_output: also writes a 1-byte-per-element mask (dropout).
        grad: name of the gradient function, ``None`` when the gradient is not modelled.
        passthrough: the gradient of every input is ``dy`` itself (no kernel).
        note: the derivation.
    """

    n_inputs: int
    vector: int
    special: int = 0
    n_outputs: int = 1
    mask_output: bool = False
    grad: str | None = None
    passthrough: bool = False
    note: str = ""


_C = ElementwiseCost

ELEMENTWISE_COSTS: dict[str, ElementwiseCost] = {
    # --- unary activations and math --------------------------------------------------------------
    "relu": _C(1, 1, grad="relu_grad", note="max(x, 0): one max"),
    "relu_grad": _C(2, 1, note="dy * (x > 0): one compare-select; reads dy, x"),
    "leaky_relu": _C(1, 2, grad="leaky_relu_grad", note="select(x > 0, x, a*x): multiply + select"),
    "leaky_relu_grad": _C(2, 2, note="select(x > 0, dy, a*dy): multiply + select"),
    "gelu": _C(1, 8, 1, grad="gelu_grad",
               note="tanh approximation (Hendrycks & Gimpel 2016): 0.5x(1+tanh(c(x+0.044715x^3))): x^2, x^3, "
                    "*0.044715, +x, *c, +1, *x, *0.5 = 8 vector; tanh = 1 special"),
    "gelu_grad": _C(2, 15, 1,
                    note="0.5(1+t) + 0.5x(1-t^2)c(1+3*0.044715x^2), t recomputed: u (5 vector), tanh (1 special), "
                         "1+t, *0.5, t^2, 1-t^2, 0.5x, *, c(1+3ax^2) (2), +, *dy = 15 vector"),
    "gelu_erf": _C(1, 4, 1, grad="gelu_erf_grad", note="x*0.5*(1+erf(x/sqrt2)): /sqrt2, +1, *0.5, *x; erf"),
    "gelu_erf_grad": _C(2, 10, 2,
                        note="Phi(x) + x*phi(x): Phi 3 vector + erf; phi = exp(-x^2/2)/sqrt(2pi) 4 vector + ex2; "
                             "x*phi, +, *dy 3 vector"),
    "silu": _C(1, 3, 2, grad="silu_grad", note="x * sigmoid(x): sigmoid (2 vector + 2 special) + 1 multiply"),
    "silu_grad": _C(2, 7, 2, note="s(1 + x(1-s)) * dy with s recomputed (2 vector + 2 special) + 5 vector"),
    "sigmoid": _C(1, 2, 2, grad="sigmoid_grad",
                  note="1/(1+exp(-x)): x*(-log2 e), ex2, +1, rcp = 2 vector + 2 special"),
    "sigmoid_grad": _C(2, 3, note="dy * y * (1 - y): reads dy, y"),
    "tanh": _C(1, 0, 1, grad="tanh_grad", note="tanh.approx: 1 special"),
    "tanh_grad": _C(2, 3, note="dy * (1 - y^2): reads dy, y"),
    "exp": _C(1, 1, 1, grad="exp_grad", note="ex2(x * log2 e)"),
    "exp_grad": _C(2, 1, note="dy * y"),
    "log": _C(1, 1, 1, grad="log_grad", note="lg2(x) * ln 2"),
    "log_grad": _C(2, 1, 1, note="dy * rcp(x)"),
    "sqrt": _C(1, 0, 1, grad="sqrt_grad", note="sqrt: 1 special"),
    "sqrt_grad": _C(2, 2, 1, note="dy * 0.5 * rcp(y)"),
    "rsqrt": _C(1, 0, 1, grad="rsqrt_grad", note="rsqrt.approx: 1 special"),
    "rsqrt_grad": _C(2, 4, note="-0.5 * y^3 * dy: y*y, *y, *-0.5, *dy"),
    "reciprocal": _C(1, 0, 1, grad="reciprocal_grad", note="rcp: 1 special"),
    "reciprocal_grad": _C(2, 2, note="-dy * y^2: y*y, *(-dy)"),
    "erf": _C(1, 0, 1, grad="erf_grad", note="erf: 1 special (an SFU-class polynomial)"),
    "erf_grad": _C(2, 4, 1, note="2/sqrt(pi) * exp(-x^2) * dy: x^2, exp (1 + ex2), *c, *dy"),
    "neg": _C(1, 1, grad="neg", note="-x"),
    "abs": _C(1, 1, grad="abs_grad", note="|x|: one max(x, -x) (sign bit clear)"),
    "abs_grad": _C(2, 1, note="select(x >= 0, dy, -dy)"),
    "square": _C(1, 1, grad="square_grad", note="x * x"),
    "square_grad": _C(2, 2, note="2 * x * dy"),
    "clip": _C(1, 2, grad="clip_grad", note="min(max(x, lo), hi)"),
    "clip_grad": _C(2, 2, note="dy where lo < x < hi: two compares folded into selects"),
    "scale": _C(1, 1, grad="scale", note="x * constant"),
    "identity": _C(1, 0, grad="identity", note="a copy or broadcast: data movement only"),
    "cast": _C(1, 0, grad="cast", note="a type conversion: data movement only (conversion is not FLOP)"),
    "opaque": _C(1, 1, grad="opaque",
                 note="an operator archsim does not model (e.g. an unknown ONNX op): treated as memory-bound "
                      "with a nominal 1 vector FLOP per element so it is visible in FLOP shares"),
    "rotary": _C(1, 3, grad="rotary",
                 note="rotary position embedding (Su et al., RoFormer, 2021): x*cos + rot(x)*sin = 2 multiplies + "
                      "1 add per element (cos/sin tables are small and cached); its gradient is the inverse rotation"),
    "dropout": _C(1, 2, mask_output=True, grad="dropout_grad",
                  note="compare a uniform draw with p, multiply by mask/(1-p); the counter-based RNG (Philox, "
                       "Salmon et al. 2011) is integer work, not FLOP; writes y and a 1-byte mask"),
    "dropout_grad": _C(2, 1, note="dy * mask / (1-p): reads dy and the 1-byte mask"),
    # --- binary ----------------------------------------------------------------------------------
    "add": _C(2, 1, passthrough=True, note="a + b"),
    "sub": _C(2, 1, passthrough=True, note="a - b (the sign of db folds into its consumer)"),
    "residual_add": _C(2, 1, passthrough=True, note="x + f(x) of a residual block"),
    "bias_add": _C(2, 1, passthrough=True, note="x + b with b broadcast"),
    "mul": _C(2, 1, grad="mul", note="a * b; grads da = dy*b, db = dy*a (two multiplies)"),
    "div": _C(2, 1, 1, grad="div_grad", note="a * rcp(b)"),
    "div_grad": _C(3, 3, 1, n_outputs=2, note="r = rcp(b); da = dy*r; db = -da*a*r: reads dy, a, b"),
    "max": _C(2, 1, grad="select_grad", note="max(a, b)"),
    "min": _C(2, 1, grad="select_grad", note="min(a, b)"),
    "select_grad": _C(3, 2, n_outputs=2, note="da = select(a >= b, dy, 0), db = the rest: reads dy, a, b"),
    "pow": _C(2, 1, 2, grad="pow_grad", note="ex2(b * lg2(a))"),
    "pow_grad": _C(3, 5, 2, n_outputs=2, note="da = dy*b*y*rcp(a) (3 vector + rcp); db = dy*y*ln(a) (2 vector + lg2)"),
    "select": _C(3, 2, note="route dy where x == y (max/min reduction backward): compare + select; reads x, y, dy"),
    "where": _C(3, 1, grad="where_grad", note="where(c, a, b): one select"),
    "where_grad": _C(2, 2, n_outputs=2, note="da = where(c, dy, 0), db = where(c, 0, dy): reads c, dy"),
}

"""Published A100 dense-GEMM references in the power section: reported without a budget, predicted
from the stock preset alone."""

import dataclasses

from validation import power_refs


def test_prediction_never_reads_the_published_figure():
    for ref in power_refs.REFERENCES:
        other = dataclasses.replace(ref, published=2.0 * ref.published)
        assert power_refs.predict(other) == power_refs.predict(ref)


def test_references_are_unbudgeted_and_error_is_relative():
    fams = {name: (n, err, budget) for name, n, err, budget in power_refs.families()}
    assert set(fams) == {r.family for r in power_refs.REFERENCES}
    for ref in power_refs.REFERENCES:
        n, err, budget = fams[ref.family]
        got = power_refs.predict(ref)[ref.quantity]
        # |predicted - published| / published, in percent (e.g. 1410 vs 1305 MHz: 105 / 1305 = 8.0 %)
        assert n == 1 and budget is None
        assert abs(err - 100.0 * abs(got - ref.published) / ref.published) < 1e-9


def test_predicted_gemm_is_at_or_under_the_a100_limit():
    # The governor never lets an op's average power exceed the preset's 400 W limit.
    for ref in power_refs.REFERENCES:
        assert power_refs.predict(ref)["power_w"] <= 400.0 * (1 + 1e-6)

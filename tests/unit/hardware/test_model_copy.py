"""model_copy(update=...) validates only the copied table and the updated values, reusing the
untouched sub-models: the result and its errors are those of validating the whole dump."""

from __future__ import annotations

import pytest

import archsim.presets as presets
from archsim.errors import ArchsimError


def _whole(hw, update):
    # The reference: the copy's full dump (the updated fields in TOML-name or field-name form),
    # validated from scratch.
    names = {info.alias or name: name for name, info in type(hw).model_fields.items()}
    data = hw.model_dump(by_alias=False)
    for key, value in update.items():
        name = names.get(key, key)
        data[name] = value.model_dump(by_alias=False) if hasattr(value, "model_dump") else value
    return type(hw).model_validate(data)


def _outcome(make):
    try:
        return make(), None
    except ArchsimError as exc:
        return None, str(exc)


@pytest.mark.parametrize("name", ["gpu/v100-sxm2-16gb", "gpu/h100-sxm5-80gb", "cpu/epyc-milan-7763"])
def test_copy_equals_whole_validation(name):
    hw = presets.load_preset(name)
    updates = [{"name": "copy"}]
    if hasattr(hw, "sm_count"):
        updates += [{"sm_count": 40}, {"clock": "900 MHz"}, {"sm_count": 0}, {"clock": "1 Hz", "sm_count": 7},
                    {"dram": hw.dram.model_copy(update={"bandwidth": "1 TB/s"})}, {"power_limit": "100 W"}]
    else:
        updates += [{"cores": 3}, {"cores": -1}]
    for update in updates:
        got, err = _outcome(lambda: hw.model_copy(update=update))  # noqa: B023
        want, want_err = _outcome(lambda: _whole(hw, update))  # noqa: B023
        assert err == want_err, update
        if want is not None:
            assert got == want and got.model_dump() == want.model_dump(), update
            assert got.content_hash() == want.content_hash()


def test_copy_shares_untouched_sub_models():
    hw = presets.load_preset("gpu/v100-sxm2-16gb")
    copy = hw.model_copy(update={"sm_count": 40})
    assert copy.sm is hw.sm and copy.energy is hw.energy and copy.dram is hw.dram
    assert copy.sm_count == 40 and hw.sm_count == 80
    changed = hw.model_copy(update={"dram": {**hw.dram.model_dump(by_alias=True), "bandwidth": "1 TB/s"}})
    assert changed.dram is not hw.dram and changed.dram.bandwidth_bytes_per_s == 1e12
    deep = hw.model_copy(update={"sm_count": 40}, deep=True)
    assert deep == copy and deep.sm is not hw.sm and deep.energy is not hw.energy

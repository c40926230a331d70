"""Verification results recorded in the manifest meet the bar the issue sets."""

import math

from .conftest import read_manifest

PREFILL_CHECKS = {"prefill_1_then_decode", "prefill_7_then_decode", "prefill_300_then_decode", "split_150_150"}


def test_fp32_matches_pytorch(any_model):
    fp32 = read_manifest(any_model)["verification"]["fp32"]
    assert fp32["passed"] is True
    assert fp32["max_abs_logit_diff"] <= 1e-3
    assert fp32["greedy_match"] == 1.0
    assert fp32["top1_agreement"] == 1.0
    assert set(fp32["checks"]) == PREFILL_CHECKS
    assert all(diff <= 1e-3 for diff in fp32["checks"].values())


def test_quantized_dtypes_are_verified_and_reported(any_model):
    verification = read_manifest(any_model)["verification"]
    for dtype in ("q8", "q4"):
        result = verification[dtype]
        assert result["finite"] is True and result["passed"] is True
        for key in ("max_abs_logit_diff", "greedy_match", "top1_agreement"):
            assert math.isfinite(result[key]) and result[key] >= 0
        assert 0 <= result["greedy_match"] <= 1 and 0 <= result["top1_agreement"] <= 1
        assert set(result["checks"]) == PREFILL_CHECKS


def test_int8_is_closer_to_fp32_than_int4(any_model):
    verification = read_manifest(any_model)["verification"]
    assert verification["q8"]["max_abs_logit_diff"] < verification["q4"]["max_abs_logit_diff"]

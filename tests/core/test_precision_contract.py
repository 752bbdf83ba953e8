"""Precision contracts: what each admits, the tolerance rule they slot into, and the setting that names them."""

from __future__ import annotations

import re

import pytest

from kforge_core.config import ConfigError, load_settings
from kforge_core.precision_contract import CONTRACTS, NAMES, contract_named, mixed_contracts_note
from kforge_core.settings import HarnessSettings
from kforge_core.tolerances import DEFAULT_TOLERANCES, output_tolerances, tolerance_in_effect


def resolve(dtype, *, user, contract, backend=()):
    return tolerance_in_effect(dtype, HarnessSettings(tolerances=user, precision=contract.name), backend).pair


def test_the_contracts_form_a_chain_each_admitting_what_the_ones_before_it_do():
    assert NAMES == ("fp32", "tf32", "fp16", "bf16")
    admitted = {name: [t for t in ("float32", "tf32", "float16", "bfloat16") if CONTRACTS[name].permits(t)]
                for name in NAMES}
    assert admitted == {"fp32": ["float32"], "tf32": ["float32", "tf32"], "fp16": ["float32", "tf32", "float16"],
                        "bf16": ["float32", "tf32", "float16", "bfloat16"]}
    assert not any(CONTRACTS[name].permits(None) for name in NAMES)  # an unknown setting is never within one
    assert not CONTRACTS["fp32"].mixed and all(CONTRACTS[name].mixed for name in NAMES[1:])


def test_a_contract_narrows_only_outputs_wider_than_its_narrowest_type():
    bf16, tf32 = CONTRACTS["bf16"], CONTRACTS["tf32"]
    assert bf16.narrows("float32") and bf16.narrows("float16") and not bf16.narrows("bfloat16")
    assert tf32.narrows("float32") and not tf32.narrows("float16") and not tf32.narrows("int64")
    assert bf16.tolerance_for("float32") == (2e-2, 2e-2) and bf16.tolerance_for("bfloat16") is None
    assert CONTRACTS["fp32"].tolerance_for("float32") is None
    assert bf16.caption(8.71) == "bf16 contract, 8.7 bits" and bf16.caption() == "bf16 contract"
    with pytest.raises(ValueError, match="unknown precision contract 'fp8'; use one of fp32, tf32, fp16, bf16"):
        contract_named("fp8")


def test_tolerances_resolve_user_then_contract_then_backend_then_defaults():
    bf16, fp32 = CONTRACTS["bf16"], CONTRACTS["fp32"]
    backend = (("float32", 1e-3, 1e-3), ("float16", 5e-2, 5e-2))
    assert resolve("float32", user={"float32": (1e-5, 1e-5)}, contract=bf16, backend=backend) == (1e-5, 1e-5)
    assert resolve("float32", user={}, contract=bf16, backend=backend) == (2e-2, 2e-2)
    assert resolve("float32", user={}, contract=fp32, backend=backend) == (1e-3, 1e-3)
    assert resolve("float32", user={}, contract=fp32) == DEFAULT_TOLERANCES["float32"]
    assert resolve("bfloat16", user={}, contract=bf16, backend=backend) == DEFAULT_TOLERANCES["bfloat16"]
    assert resolve("int64", user={}, contract=bf16, backend=backend) == (0.0, 0.0)


def test_harness_settings_hold_the_contract_and_resolve_tolerances_through_it():
    settings = HarnessSettings(precision="tf32")
    assert settings.contract is CONTRACTS["tf32"]
    assert tolerance_in_effect("float32", settings).pair == (1e-2, 1e-2)
    assert output_tolerances(settings, ["float32", "int64", "float32"]) == (("float32", 1e-2, 1e-2),
                                                                           ("int64", 0.0, 0.0))
    with pytest.raises(ValueError, match="unknown precision contract"):
        HarnessSettings(precision="fp64")


def test_the_contract_is_a_setting_from_file_environment_or_flag(tmp_path):
    (tmp_path / "kforge.toml").write_text('[harness]\nprecision = "bf16"\n')
    assert load_settings(tmp_path, environ={}).harness.precision == "bf16"
    assert load_settings(tmp_path, environ={"KFORGE_HARNESS__PRECISION": "tf32"}).harness.precision == "tf32"
    assert load_settings(tmp_path, environ={}, flags={"harness.precision": "fp32"}).harness.precision == "fp32"
    (tmp_path / "kforge.toml").write_text('[harness]\nprecision = "half"\n')
    with pytest.raises(ConfigError, match="kforge.toml: unknown precision contract 'half'"):
        load_settings(tmp_path, environ={})


def test_figures_from_several_contracts_carry_a_note():
    assert mixed_contracts_note(["fp32", "fp32"]) == "" and mixed_contracts_note([]) == ""
    note = mixed_contracts_note(["bf16", "fp32", "fp32"])
    assert note.startswith("these figures were measured under different precision contracts (fp32: 2, bf16: 1)")
    assert "compare speedups only within one contract" in note


def test_the_documented_table_of_contracts_matches_the_code():
    from pathlib import Path

    from kforge_core.harness.worker.precision import floor_bits

    page = (Path(__file__).resolve().parents[2] / "docs" / "precision.md").read_text()
    row = r"^\| `(fp32|tf32|fp16|bf16)` \| [^|]+ \| ([^|]+) \| ([^|]+) \| ([^|]+) \| ([^|]+) \|$"
    rows = re.findall(row, page, re.M)
    assert [row[0] for row in rows] == list(NAMES)
    for name, wide, half, bfloat, floor in rows:
        contract = CONTRACTS[name]
        for dtype, cell in (("float32", wide), ("float16", half), ("bfloat16", bfloat)):
            atol, rtol = (float(x) for x in re.match(r"\s*([\d.e-]+), ([\d.e-]+)", cell).groups())
            assert resolve(dtype, user={}, contract=contract) == (atol, rtol), (name, dtype)
        if contract.mixed:
            assert floor_bits(24.0, "float32", contract) == float(floor)

"""Device facts are read from what the OS and PyTorch report, by small parsers tested on the tools' text."""

from __future__ import annotations

import json

from kforge_metal.device_facts import (
    MetalFacts, parse_brand_string, parse_displays_json, parse_memsize, read_device_facts,
)

# The shape of `system_profiler SPDisplaysDataType -json` on an Apple silicon Mac (keys as macOS writes them).
DISPLAYS = json.dumps({"SPDisplaysDataType": [{
    "_name": "Apple M3 Max", "sppci_model": "Apple M3 Max", "sppci_cores": "40", "sppci_bus": "spdisplays_builtin",
    "sppci_device_type": "spdisplays_gpu", "spdisplays_vendor": "sppci_vendor_Apple",
    "spdisplays_mtlgpufamilysupport": "spdisplays_metal3",
    "spdisplays_ndrvs": [{"_name": "Color LCD", "spdisplays_main": "spdisplays_yes"}],
}]})
INTEL_MAC = json.dumps({"SPDisplaysDataType": [
    {"_name": "Intel UHD Graphics 630", "sppci_model": "Intel UHD Graphics 630", "spdisplays_vram": "1536 MB"},
    {"_name": "AMD Radeon Pro 5500M", "sppci_model": "AMD Radeon Pro 5500M", "spdisplays_vram": "8 GB"},
]})


def test_the_tools_text_is_parsed():
    assert parse_brand_string("Apple M3 Max\n") == "Apple M3 Max"
    assert parse_memsize("68719476736\n") == 64 << 30 and parse_memsize("") is None
    gpu = parse_displays_json(DISPLAYS)
    assert (gpu.model, gpu.cores, gpu.metal_family) == ("Apple M3 Max", 40, "Metal 3")
    assert parse_displays_json(INTEL_MAC).cores is None  # no Apple GPU there
    assert parse_displays_json("not json").model == ""


def test_facts_come_from_the_commands_and_say_what_is_unknown():
    outputs = {"machdep.cpu.brand_string": "Apple M3 Max\n", "hw.memsize": "68719476736\n",
               "SPDisplaysDataType": DISPLAYS}
    asked = []

    def run(command):
        asked.append(command)
        return next((text for key, text in outputs.items() if key in command), None)

    facts = read_device_facts(run, working_set=lambda: 48 << 30)
    assert ["sysctl", "-n", "machdep.cpu.brand_string"] in asked
    assert ["system_profiler", "SPDisplaysDataType", "-json"] in asked
    assert facts.headline() == "Apple M3 Max, 40-core GPU"
    text = facts.describe()
    assert "Target: Apple M3 Max, 40-core GPU (Metal 3)" in text
    assert "Unified memory: 64 GiB" in text and "48.0 GiB (torch.mps.recommended_max_memory())" in text
    assert "SIMD-group width 32" in text and "Not known" not in text

    nothing = read_device_facts(lambda command: None, working_set=lambda: None)
    assert nothing.headline() == "an Apple GPU"
    assert len(nothing.unknown) == 3 and "the GPU core count" in nothing.describe()


def test_on_linux_the_facts_are_unknown_rather_than_wrong():
    facts = read_device_facts()  # real commands: no sysctl brand string or system_profiler here
    assert isinstance(facts, MetalFacts)
    assert facts.gpu_cores is None and facts.working_set_bytes is None

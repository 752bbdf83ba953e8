"""Finding the candidate in a reply: fences, file names, several files, the ModelNew entry, and no code."""

from __future__ import annotations

from kforge_core.agents import parse_reply

MODEL = "import torch\n\nclass ModelNew(torch.nn.Module):\n    pass\n"


def test_one_python_block_is_the_entry():
    parsed = parse_reply(f"Sure.\n\n```python\n{MODEL}```\nDone.", label="f1")
    assert parsed.candidate is not None
    assert parsed.candidate.entry == "model_new.py" and parsed.candidate.source == MODEL
    assert parsed.candidate.label == "f1"


def test_several_files_named_on_the_fence_in_the_first_line_and_in_the_lead_in():
    reply = (
        "```cuda kernel.cu\n__global__ void k() {}\n```\n"
        "```cpp\n// file: binding.cpp\nint x;\n```\n"
        "**helpers.py**\n```python\nSCALE = 2\n```\n"
        f"```python model.py\n{MODEL}```\n"
        "```bash\nnvcc -O3 kernel.cu\n```\n"
    )
    candidate = parse_reply(reply, label="f1").candidate
    assert candidate is not None and candidate.entry == "model.py"
    names = {f.name for f in candidate.files}
    assert names == {"model.py", "kernel.cu", "binding.cpp", "helpers.py"}  # the unnamed bash block is left out
    assert candidate.file("kernel.cu") == "__global__ void k() {}\n"
    assert candidate.file("binding.cpp").startswith("// file: binding.cpp")


def test_the_last_block_defining_model_new_wins_and_drafts_without_it_are_ignored():
    reply = f"Draft:\n```python\n{MODEL.replace('pass', 'x = 1')}```\nFinal:\n```py\n{MODEL}```\n```python\nprint(1)\n```\n"
    candidate = parse_reply(reply, label="a").candidate
    assert candidate is not None and candidate.source == MODEL and len(candidate.files) == 1


def test_tilde_fences_longer_fences_and_title_attributes():
    reply = f'~~~python title="solution.py"\n{MODEL}~~~\n````markdown\n```python\nnot code\n```\n````\n'
    candidate = parse_reply(reply, label="a").candidate
    assert candidate is not None and candidate.entry == "solution.py"


def test_an_unfenced_module_is_accepted_only_if_it_compiles():
    assert parse_reply(MODEL, label="a").candidate is not None
    parsed = parse_reply("Here: class ModelNew should use a loop.", label="a")
    assert parsed.candidate is None and "no fenced code block" in parsed.problem


def test_replies_without_usable_code_say_why():
    assert parse_reply("   \n", label="a").problem == "the reply was empty."
    parsed = parse_reply("```cuda kernel.cu\nint x;\n```\n```python\nprint(1)\n```", label="a")
    assert parsed.candidate is None
    assert "no Python code block defines `class ModelNew`" in parsed.problem and "kernel.cu" in parsed.problem


def test_an_unsafe_file_name_is_refused_not_written():
    parsed = parse_reply(f"```python\n{MODEL}```\n```sh /etc/evil.sh\nx\n```\n```c ../up.c\nx\n```", label="a")
    assert parsed.candidate is None and "cannot form a candidate" in parsed.problem


def test_a_reply_cut_off_inside_a_block_keeps_what_there_is():
    candidate = parse_reply(f"```python\n{MODEL}    def forward(self, x):\n        return", label="a").candidate
    assert candidate is not None and candidate.source.endswith("return\n")


def test_the_entry_defines_the_class_the_harness_looks_for():
    reply = "```python\nclass ModelNew:\n    pass\n```\n```python\nclass Kernel:\n    pass\n```\n"
    parsed = parse_reply(reply, label="a", class_name="Kernel")
    assert parsed.candidate is not None and "class Kernel" in parsed.candidate.source
    missing = parse_reply("```python\nclass ModelNew:\n    pass\n```\n", label="a", class_name="Kernel")
    assert missing.candidate is None and "defines `class Kernel`" in missing.problem

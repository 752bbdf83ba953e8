"""Finding the candidate in a model's reply.

A reply holds fenced code blocks (```` ``` ```` or ``~~~``). A block names its file on its opening line
(```` ```cuda kernel.cu ````, ```` ```python title="model_new.py" ````), on its first line (``# file: kernel.cu``,
``// file: kernel.cu``), or on the line just before it (``**kernel.cu**``, ``File: `kernel.cu```). The entry is the
last Python block that defines ``class ModelNew`` (or the class ``harness.candidate_class`` names); every other
named block is one more file of the candidate, and unnamed blocks that are not the entry (shell commands, excerpts)
are left out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..records import Candidate, SourceFile

_FENCE = re.compile(r"^[ \t]{0,3}(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n`]*?)[ \t]*$")
_FILE_NAME = r"[\w./-]*[\w-]\.[A-Za-z0-9]+"
_INFO_NAME = re.compile(rf"^(?:(?:title|file|filename|name)=)?[\"']?(?P<name>{_FILE_NAME})[\"']?$")
_FIRST_LINE_NAME = re.compile(rf"^\s*(?:#|//|/\*|--|;)\s*file(?:name)?\s*:\s*(?P<name>{_FILE_NAME})\s*(?:\*/)?\s*$", re.I)
_LEAD_IN_NAME = re.compile(
    rf"^\s*(?:#+\s*)?(?:(?:file(?:name)?|path)\s*:?\s*)?[*_`\"']*(?P<name>{_FILE_NAME})[*_`\"']*\s*:?\s*$", re.I
)
_PYTHON = {"python", "py", "python3"}
DEFAULT_ENTRY = "model_new.py"


@dataclass(frozen=True)
class CodeBlock:
    """One fenced block: its language (may be empty), the file it names (may be empty) and its text."""

    language: str
    name: str
    text: str

    @property
    def is_python(self) -> bool:
        return self.language.lower() in _PYTHON or self.name.endswith(".py")

    def defines(self, class_name: str) -> bool:
        return bool(_class_pattern(class_name).search(self.text))


@dataclass(frozen=True)
class ParsedReply:
    """The candidate a reply holds, or why there is none (said to the model when it is asked again)."""

    candidate: Candidate | None
    problem: str = ""


def _info_parts(info: str) -> tuple[str, str]:
    """(language, file name) from a fence's info string: "cuda kernel.cu", "kernel.cu", "python title=a.py"."""
    language, name = "", ""
    for token in info.replace("{", " ").replace("}", " ").split():
        match = _INFO_NAME.match(token)
        if match and not name and "." in token:
            name = match["name"]
        elif not language and "=" not in token:
            language = token.lstrip(".")
    return language, name


def code_blocks(reply: str) -> list[CodeBlock]:
    """Every fenced block in ``reply``, in order; a block left open at the end runs to the end of the reply."""
    lines = reply.splitlines()
    blocks: list[CodeBlock] = []
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        fence = opening["fence"]
        language, name = _info_parts(opening["info"])
        end = i + 1
        while end < len(lines):
            closing = _FENCE.match(lines[end])
            if closing and closing["fence"][0] == fence[0] and len(closing["fence"]) >= len(fence) and not closing["info"]:
                break
            end += 1
        body = lines[i + 1:end]
        if not name and body:
            first = _FIRST_LINE_NAME.match(body[0])
            if first:
                name = first["name"]
        if not name:
            name = _lead_in_name(lines[:i])
        blocks.append(CodeBlock(language, name, "\n".join(body).rstrip() + "\n"))
        i = end + 1
    return blocks


def _lead_in_name(before: list[str]) -> str:
    for line in reversed(before[-2:]):
        if line.strip():
            match = _LEAD_IN_NAME.match(line)
            return match["name"] if match else ""
    return ""


def _class_pattern(class_name: str) -> re.Pattern[str]:
    return re.compile(rf"^class\s+{re.escape(class_name)}\b", re.M)


def parse_reply(reply: str, *, label: str, class_name: str = "ModelNew") -> ParsedReply:
    """The candidate in ``reply`` (labelled ``label``) whose entry defines ``class_name``, or the reason there is
    none."""
    if not reply.strip():
        return ParsedReply(None, "the reply was empty.")
    blocks = code_blocks(reply)
    if not blocks:
        if _class_pattern(class_name).search(reply) and _compiles(reply):
            blocks = [CodeBlock("python", "", reply)]  # a bare module without fences
        else:
            return ParsedReply(None, "the reply has no fenced code block.")
    entries = [b for b in blocks if b.is_python and b.defines(class_name)]
    if not entries:
        kinds = ", ".join(sorted({b.name or b.language or "unlabelled" for b in blocks}))
        return ParsedReply(None, f"no Python code block defines `class {class_name}` (blocks found: {kinds}).")
    entry = entries[-1]
    entry_name = entry.name if entry.name.endswith(".py") else DEFAULT_ENTRY
    files = {entry_name: entry.text}
    for block in blocks:
        if block is not entry and block.name and block.name != entry_name:
            files[block.name] = block.text  # a later block of the same name is the model's revision
    try:
        sources = tuple(SourceFile(name, text) for name, text in files.items())
        return ParsedReply(Candidate(files=sources, entry=entry_name, label=label))
    except ValueError as exc:
        return ParsedReply(None, f"the reply's files cannot form a candidate: {exc}")


def _compiles(text: str) -> bool:
    try:
        compile(text, "<reply>", "exec")
    except SyntaxError:
        return False
    return True

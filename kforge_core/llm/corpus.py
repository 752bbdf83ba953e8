"""``corpus:DIR``: a stand-in model that answers each request with a kernel for the problem from DIR, for
measuring a search (``--width``, ``--devices``) without paying a model, and for exercising repair.

DIR holds kernels as ``kforge bench --solutions`` reads them: ``NAME.py`` (anywhere under DIR, flat or mirroring a
suite's folders) or a directory ``NAME/`` holding ``model_new.py`` and its other files, NAME being the problem
file's name without ``.py``; ``NAME.TAG.py`` files are more kernels for the same problem, one of which is drawn
for each request. They may be published solutions, or wrong and failing ones.

Options follow the directory as a query (``corpus:solutions/?latency=20&fail=0.3``):

- ``latency`` (seconds, default 0) before each answer, plus up to ``jitter`` seconds (default 0) drawn per request;
- ``fail`` (0 to 1, default 0): the fraction of answers made to fail on purpose: no code, code that does not
  compile, or code whose outputs are wrong (in turn, as drawn);
- ``errors`` (0 to 1, default 0): the fraction of requests that fail as a server error would (retried as one);
- ``seed`` (default 0): what is drawn for a request follows from the seed and the prompt, so a run is repeatable.

The performance analyst is answered with three generic, numbered recommendations. Usage is reported as a quarter
of each text's bytes (about a token's worth of English). ``kforge_core.llm.corpus_server`` serves the same model
over HTTP as an OpenAI-compatible server, for ``openai-like:``.
"""

from __future__ import annotations

import hashlib
import random
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qsl

from ..errors import KForgeError

ANALYST_REPLY = """1. Fuse the element-wise operations into the main kernel so the intermediate results never go \
back to memory.
2. Tile the work so that each block reuses the data it loads, and make the accesses contiguous.
3. Give each thread more work and fewer launches: raise the work per launch and drop redundant synchronisation.
"""
_TASK = re.compile(r"^# Task: (\S+) on ", re.M)
_CLASS = re.compile(r"the module that defines `(\w+)`")
_ANALYST = "performance-analysis agent"
FAILURES = ("no_code", "compile", "wrong")


class CorpusUnavailable(ConnectionError):
    """A request the corpus fails on purpose (``errors``); a transient failure, retried as a server's would be."""


@dataclass(frozen=True)
class CorpusOptions:
    latency_s: float = 0.0
    jitter_s: float = 0.0
    fail: float = 0.0
    errors: float = 0.0
    seed: int = 0

    def __post_init__(self) -> None:
        if self.latency_s < 0 or self.jitter_s < 0:
            raise ValueError("latency and jitter must be >= 0")
        if not (0 <= self.fail <= 1 and 0 <= self.errors < 1):
            raise ValueError("fail must be between 0 and 1, errors at least 0 and below 1")


_NAMES = {"latency": "latency_s", "jitter": "jitter_s", "fail": "fail", "errors": "errors", "seed": "seed"}


def parse_corpus(model: str) -> tuple[Path, CorpusOptions]:
    """``DIR?latency=20&fail=0.3`` -> (DIR, options); a mistake is a KForgeError naming the options."""
    directory, _, query = model.partition("?")
    values: dict[str, float | int] = {}
    for name, text in parse_qsl(query, keep_blank_values=True):
        if name not in _NAMES:
            raise KForgeError(f"corpus:{model}: unknown option {name!r}", hint=f"options: {', '.join(_NAMES)}")
        try:
            values[_NAMES[name]] = int(text) if name == "seed" else float(text)
        except ValueError:
            raise KForgeError(f"corpus:{model}: {name}={text!r} is not a number") from None
    try:
        options = CorpusOptions(**values)  # type: ignore[arg-type]
    except ValueError as exc:
        raise KForgeError(f"corpus:{model}: {exc}") from None
    return Path(directory), options


def corpus_spec_text(directory: Path, query: str) -> str:
    """The model text of a corpus spec, with its directory absolute (a resumed run finds it from anywhere)."""
    return str(directory.resolve()) + (f"?{query}" if query else "")


@dataclass(frozen=True)
class CorpusAnswer:
    text: str
    input_tokens: int
    output_tokens: int


class CorpusModel:
    """Answers chat requests (a system and a user text) from the kernels in ``directory``; thread-safe."""

    def __init__(self, directory: Path, options: CorpusOptions = CorpusOptions(),
                 sleep=time.sleep) -> None:  # noqa: ANN001
        if not directory.is_dir():
            raise KForgeError(f"corpus directory not found: {directory}")
        self.directory = directory.resolve()
        self.options = options
        self._sleep = sleep
        self._lock = threading.Lock()
        self._asked: dict[str, int] = {}  # prompt digest -> times asked (a retry draws anew)
        self.answered = 0

    def answer(self, system: str, user: str, *, max_tokens: int | None = None) -> CorpusAnswer:
        """The reply to one request, after the latency; raises CorpusUnavailable for a request failed on purpose,
        KForgeError when DIR holds no kernel for the problem."""
        draw = self._draw(system + "\0" + user)
        self._sleep(self.options.latency_s + draw.uniform(0, self.options.jitter_s))
        if draw.random() < self.options.errors:
            raise CorpusUnavailable("the corpus failed this request on purpose (errors=...)")
        if _ANALYST in system:
            text = ANALYST_REPLY
        else:
            text = self._kernel_reply(user, draw)
        with self._lock:
            self.answered += 1
        output = _tokens(text) if max_tokens is None else min(_tokens(text), max_tokens)
        return CorpusAnswer(text, _tokens(system) + _tokens(user), output)

    def kernels(self, name: str) -> list[Path]:
        """The kernels DIR holds for problem ``name``: files and directories, in a stable order."""
        found = [p for p in self.directory.rglob(f"{name}.py") if p.is_file()]
        found += [p for p in self.directory.rglob(f"{name}.*.py") if p.is_file()]
        found += [p for p in self.directory.rglob(name) if p.is_dir() and (p / "model_new.py").is_file()]
        return sorted(found)

    # ------------------------------------------------------------------------------------------ inside

    def _draw(self, prompt: str) -> random.Random:
        digest = hashlib.sha256(prompt.encode()).hexdigest()[:16]
        with self._lock:
            count = self._asked[digest] = self._asked.get(digest, 0) + 1
        return random.Random(f"{self.options.seed}:{digest}:{count}")

    def _kernel_reply(self, user: str, draw: random.Random) -> str:
        match = _TASK.search(user)
        if match is None:
            raise KForgeError("a corpus model answers kernel requests: the prompt names no problem ('# Task: ...')")
        name = match.group(1)
        kernels = self.kernels(name)
        if not kernels:
            raise KForgeError(f"the corpus {self.directory} holds no kernel for problem {name}",
                              hint=f"add {name}.py (or a directory {name}/ with model_new.py) under it")
        chosen = kernels[draw.randrange(len(kernels))]
        files = _files(chosen)
        class_name = found.group(1) if (found := _CLASS.search(user)) else "ModelNew"
        failure = FAILURES[draw.randrange(len(FAILURES))] if draw.random() < self.options.fail else ""
        if failure == "no_code":
            return f"I would write {class_name} for {name} next, but I ran out of time before writing the code."
        entry = files["model_new.py"]
        if failure == "compile":
            entry = "this line is not Python (a deliberate syntax error from the corpus)\n" + entry
        elif failure == "wrong":
            entry = entry.rstrip() + "\n" + _WRONG.format(cls=class_name)
        files["model_new.py"] = entry
        where = chosen.relative_to(self.directory)
        blocks = "\n".join(f"```{'python' if n.endswith('.py') else ''} {n}\n{t.rstrip()}\n```\n"
                           for n, t in files.items())
        return f"Here is {class_name} for {name} (corpus kernel {where}).\n\n{blocks}"


def _files(chosen: Path) -> dict[str, str]:
    """The kernel's files, its entry named model_new.py."""
    if chosen.is_file():
        return {"model_new.py": chosen.read_text()}
    files = {"model_new.py": (chosen / "model_new.py").read_text()}
    for path in sorted(chosen.rglob("*")):
        if path.is_file() and path.name != "model_new.py" and "__pycache__" not in path.parts:
            files[str(path.relative_to(chosen))] = path.read_text()
    return files


def _tokens(text: str) -> int:
    return (len(text.encode()) + 3) // 4


_WRONG = """

# the corpus made this candidate wrong on purpose: every output is off by one
_corpus_forward = {cls}.forward


def _corpus_wrong_forward(self, *args, **kwargs):
    out = _corpus_forward(self, *args, **kwargs)
    return tuple(o + 1 for o in out) if isinstance(out, (tuple, list)) else out + 1


{cls}.forward = _corpus_wrong_forward
"""

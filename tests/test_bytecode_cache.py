"""Compiled prompt and rubric templates are kept per process by source checksum
(pytest_ctxeval.core.bytecode): compiled once for every run, and never stale, even when a file
is rewritten within one timestamp tick."""

from __future__ import annotations

import os
from pathlib import Path

import jinja2
import pytest
from jinja2.sandbox import SandboxedEnvironment

from pytest_ctxeval.core.bytecode import MemoryBytecodeCache
from pytest_ctxeval.engine.prompt import BUILTIN_PROMPTS, PromptSet


def _env(folder: Path, cache: MemoryBytecodeCache) -> SandboxedEnvironment:
    return SandboxedEnvironment(loader=jinja2.FileSystemLoader(str(folder)), bytecode_cache=cache)


def test_a_template_is_compiled_once_across_environments(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "t.j2").write_text("hello {{ name }}")
    cache = MemoryBytecodeCache()
    compiled: list[str] = []
    real = SandboxedEnvironment.compile

    def counting(self, source, *a, **kw):  # type: ignore[no-untyped-def]
        compiled.append(source)
        return real(self, source, *a, **kw)

    monkeypatch.setattr(SandboxedEnvironment, "compile", counting)
    assert _env(tmp_path, cache).get_template("t.j2").render(name="a") == "hello a"
    assert _env(tmp_path, cache).get_template("t.j2").render(name="b") == "hello b"
    assert compiled == ["hello {{ name }}"]


def test_a_rewritten_template_is_compiled_again_even_with_the_same_mtime(tmp_path: Path) -> None:
    path = tmp_path / "t.j2"
    path.write_text("one {{ x }}")
    stamp = os.stat(path).st_mtime_ns
    cache = MemoryBytecodeCache()
    assert _env(tmp_path, cache).get_template("t.j2").render(x=1) == "one 1"
    path.write_text("two {{ x }}")
    os.utime(path, ns=(stamp, stamp))  # as if rewritten within the same tick
    assert _env(tmp_path, cache).get_template("t.j2").render(x=1) == "two 1"


def test_the_cache_is_bounded(tmp_path: Path) -> None:
    cache = MemoryBytecodeCache(size=2)
    for i in range(4):
        (tmp_path / f"t{i}.j2").write_text(f"t{i}")
        _env(tmp_path, cache).get_template(f"t{i}.j2").render()
    assert len(cache._codes) == 2


def test_a_prompt_set_reads_the_prompt_as_it_is_now(tmp_path: Path) -> None:
    prompt = tmp_path / "compact.j2"
    original = (BUILTIN_PROMPTS / "compact.j2").read_text()
    prompt.write_text(original)
    stamp = os.stat(prompt).st_mtime_ns
    first = PromptSet(prompt).render_compact()
    prompt.write_text(original.replace("Your task is to create", "Your job is to create"))
    os.utime(prompt, ns=(stamp, stamp))
    second = PromptSet(prompt).render_compact()
    assert first != second and "Your job is to create" in second and "Your job is to create" not in first
    memory = tmp_path / "memory.j2"
    memory.write_text("# Notes A")
    assert PromptSet(session_memory_template=memory).session_memory_template() == "# Notes A"
    memory.write_text("# Notes B")
    assert PromptSet(session_memory_template=memory).session_memory_template() == "# Notes B"

"""A text block and a tool result with text content are dumped from their fields
(core.block_dumps.FAST): the same dict, in the same key order, as pydantic's
``model_dump(exclude_none=True)``; anything else (list content, values built without
validation) is dumped by the model."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from pytest_ctxeval.core import block_dumps
from pytest_ctxeval.core.messages import TextBlock, ToolResultBlock, ToolUseBlock

_text = st.text(max_size=30)


def _same(block: object) -> None:
    want = block.model_dump(exclude_none=True)  # type: ignore[attr-defined]
    got = block_dumps.block_dict(block)
    assert got == want and list(got.items()) == list(want.items())
    assert block_dumps.block_dict(block) is not got  # each caller its own dict


@given(_text)
def test_text_blocks(text: str) -> None:
    _same(TextBlock(text=text))


@given(_text, _text | st.lists(_text.map(lambda t: TextBlock(text=t)), max_size=3), st.booleans())
def test_tool_results(use_id: str, content: object, is_error: bool) -> None:
    _same(ToolResultBlock(tool_use_id=use_id, content=content, is_error=is_error))


@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings")  # the values are wrong on purpose
@given(st.sampled_from([None, 3, "x", b"y"]), st.sampled_from([None, 1, True, "e"]))
def test_values_not_of_the_declared_type_are_dumped_by_the_model(content: object, is_error: object) -> None:
    block = ToolResultBlock.model_construct(tool_use_id="t", content=content, is_error=is_error)
    want = block.model_dump(exclude_none=True, warnings=False)
    assert block_dumps.block_dict(block) == want
    if not (type(content) is str and type(is_error) is bool):
        assert block_dumps.FAST[ToolResultBlock](block) is None


def test_other_blocks_keep_the_remembered_dump() -> None:
    block = ToolUseBlock(id="t1", name="Read", input={"file_path": "a.py", "limit": None})
    _same(block)
    assert block_dumps.FAST.get(ToolUseBlock) is None

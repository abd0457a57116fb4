"""Small scenario files the command-line, plugin, report and fault tests write into their folders."""

from __future__ import annotations

import textwrap

#: A 4,000-token rename session ending with a /compact (plugin and report tests).
TINY = textwrap.dedent("""\
    name: tiny
    context_window: 4000
    turns:
      - user: "Rename the helper in src/util.py to parse_date and update its callers."
      - assistant: "Reading the module."
        tools:
          - name: Read
            input: {file_path: src/util.py}
            result: "{{ python_file(lines=260, seed=1) }}"
      - assistant: "Renaming."
        tools:
          - name: Edit
            input: {file_path: src/util.py, old_string: "def pd(", new_string: "def parse_date("}
            result: "The file src/util.py has been updated."
      - user: "Also add a docstring."
      - assistant: "Adding it."
        tools:
          - name: Edit
            input: {file_path: src/util.py, old_string: "def parse_date(", new_string: "def parse_date(  # doc"}
            result: "ok"
      - compact: true
    """)


def rename_reads(name: str) -> str:
    """A 12,000-token session named ``name``: nine Reads of one module (enough to compact) and the
    rename; callers add the turns that end it."""
    return f"name: {name}\n" + textwrap.dedent("""\
        context_window: 12000
        turns:
          - user: "Rename the helper in src/util.py to parse_date."
          - repeat: 9
            turns:
              - assistant: "Reading part {{ i }} of the module."
                tools:
                  - name: Read
                    input: {file_path: src/util.py, offset: "{{ i * 160 - 159 }}", limit: 160}
                    result: "{{ python_file(lines=160, seed=i) }}"
          - assistant: "Renaming."
            tools:
              - name: Edit
                input: {file_path: src/util.py, old_string: "def pd(", new_string: "def parse_date("}
                result: "The file src/util.py has been updated."
        """)

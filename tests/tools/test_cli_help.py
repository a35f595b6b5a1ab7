"""Every subcommand's --help ends with examples."""

from __future__ import annotations

import argparse

import pytest

from zarrpy.tools.cli import _parser, main

COMMANDS = sorted(
    name for action in _parser()._actions if isinstance(action, argparse._SubParsersAction) for name in action.choices
)


def test_the_commands_are_all_there():
    assert COMMANDS == ["consolidate", "cp", "demo", "info", "migrate", "tree", "verify"]


@pytest.mark.parametrize("command", COMMANDS)
def test_help_has_an_example(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    assert "example" in text.lower()
    examples = text[text.index("examples:"):]
    assert f"zarrpy {command}" in examples  # an example of this very command
    assert "``" not in text and ":func:" not in text  # plain text, not reST

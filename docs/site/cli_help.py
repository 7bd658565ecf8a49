"""A Sphinx extension: the CLI reference, made at build time from the `rntuple` binary's own help.

The directive ``rntuple-cli`` (no arguments) runs ``$RNTUPLE_BIN --help`` (the binary named by the ``rntuple_bin``
setting of conf.py: env RNTUPLE_BIN, default target/release/rntuple), finds its subcommands in the "Commands:" list,
and runs ``--help`` of each, recursively (``rntuple bench write --help``). Each command becomes a section (so it is in
the table of contents and has an anchor, ``#rntuple-info``) holding the help text verbatim. Nothing is written into
the source tree; the binary is recorded as a dependency of the page, so a rebuilt binary rebuilds the page.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles

COMMAND_LINE = re.compile(r"^  (\S+)\s{2,}\S")
SECTION_CHARS = "-~^"


def run_help(binary: str, args: list[str]) -> str:
    """The help text of ``binary args... --help`` (clap prints it on stdout and exits 0)."""
    done = subprocess.run([binary, *args, "--help"], capture_output=True, text=True, timeout=60, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{binary} {' '.join(args)} --help failed ({done.returncode}): {done.stderr.strip()}")
    return done.stdout.rstrip() + "\n"


def subcommands(help_text: str) -> list[str]:
    """The names in the "Commands:" list of a clap help text, without clap's own ``help``."""
    names, inside = [], False
    for line in help_text.splitlines():
        if line.strip() == "Commands:":
            inside = True
            continue
        if inside:
            if not line.startswith("  "):
                break
            m = COMMAND_LINE.match(line) or re.match(r"^  (\S+)$", line)
            if m and m.group(1) != "help":
                names.append(m.group(1))
    return names


def command_tree(binary: str, args: list[str] | None = None) -> list[tuple[list[str], str]]:
    """(arguments, help text) of the binary and of every subcommand, depth first."""
    args = args or []
    text = run_help(binary, args)
    out = [(args, text)]
    for name in subcommands(text):
        out.extend(command_tree(binary, [*args, name]))
    return out


def reference_rst(binary: str) -> str:
    """The reference as reStructuredText: a section per command, its help as a literal block."""
    lines: list[str] = []
    for args, text in command_tree(binary):
        if not args:
            lines += [".. code-block:: text", ""]
            lines += [("   " + line).rstrip() for line in text.splitlines()]
            lines.append("")
            continue
        title = "rntuple " + " ".join(args)
        underline = SECTION_CHARS[min(len(args), len(SECTION_CHARS)) - 1]
        lines += [f"``{title}``", underline * (len(title) + 4), "", ".. code-block:: text", ""]
        lines += [("   " + line).rstrip() for line in text.splitlines()]
        lines.append("")
    return "\n".join(lines) + "\n"


class CliReference(SphinxDirective):
    has_content = False
    required_arguments = 0

    def run(self) -> list[nodes.Node]:
        binary = self.config.rntuple_bin
        if not Path(binary).is_file():
            raise self.error(f"rntuple-cli: no rntuple binary at {binary} (build it with `make build`, or set RNTUPLE_BIN)")
        self.env.note_dependency(str(Path(binary).resolve()))
        try:
            rst = reference_rst(binary)
        except (OSError, RuntimeError, subprocess.TimeoutExpired) as e:
            raise self.error(f"rntuple-cli: {e}") from e
        container = nodes.container()
        nested_parse_with_titles(self.state, StringList(rst.splitlines(), source="rntuple --help"), container)
        return container.children


def setup(app):
    app.add_config_value("rntuple_bin", "target/release/rntuple", "env")
    app.add_directive("rntuple-cli", CliReference)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}

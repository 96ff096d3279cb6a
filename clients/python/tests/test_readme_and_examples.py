"""The README's example run as written (its output compared with the README's), and the three examples
run against a real server, each writing its PNG."""

import os
import re
import subprocess
import sys

import pytest

from conftest import PACKAGE_ROOT


def fenced_blocks() -> list:
    """(language, text) of every fenced block of the README, in order."""
    text = (PACKAGE_ROOT / "README.md").read_text()
    return re.findall(r"^```(\w*)\n(.*?)^```$", text, flags=re.M | re.S)


def run(args, server, **kw):
    env = dict(os.environ, DENOC_SERVER=server.target)  # the installed package, as a user runs them
    result = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=300, env=env,
                            check=False, **kw)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_readme_example_as_written(server, tmp_path):
    found = fenced_blocks()
    index = [language for language, _ in found].index("python")
    code, expected = found[index][1], found[index + 1][1].strip()  # the example and its output
    assert len(code.strip().splitlines()) == 10
    assert run(["-c", code], server, cwd=tmp_path).strip() == expected


@pytest.mark.parametrize("example", ["fig8_stanford_torques", "fig6_planar_free_fall", "planner_trajectory"])
def test_example(server, tmp_path, example):
    out = run([str(PACKAGE_ROOT / "examples" / f"{example}.py"), "--server", server.target, "--out",
               str(tmp_path)], server, cwd=tmp_path)
    png = tmp_path / f"{example}.png"
    assert png.exists() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", out
    assert str(png) in out


def test_the_top_level_readme_shows_this_example():
    """README.md's Python block is this README's example (so the test above runs it as written)."""
    code = next(text for language, text in fenced_blocks() if language == "python")
    top = (PACKAGE_ROOT.parent.parent / "README.md").read_text()
    assert "```python\n" + code + "```" in top

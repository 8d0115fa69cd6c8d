"""Every command the README shows runs as a new user would type it, in README order, in a fresh folder laid out like the checkout: none may fail. Each command is either run or skipped with a reason (a GPU, Ray, a measurement of the Numbers table); a command nobody classified fails the test."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import REPO

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("readme")]  # one workspace, commands in order

README = REPO / "README.md"
# Inline commands start like this; the rest of the inline code is names and options.
_COMMAND = re.compile(r"^(eqsat-test|python|scripts/|bash |pip )")
OK_OR_FOUND = (0, 1)  # 1: compiler-bug candidates found, the command did its job

# (pattern over the whole command, what to do) in order; the first match decides.
#   ("run", exit codes accepted, {placeholder: value})  or  ("skip", why)
RULES = [
    (r"^scripts/test\.sh", ("skip", "runs this test suite itself")),
    (r"^scripts/build_rule_cache\.py", ("skip", "rewrites the rule library shipped in the package (a maintainer's step "
                                                "after rules change; tests/unit/rewrite/test_rule_prebuilt.py checks it)")),
    (r"^pip install", ("skip", "installs packages: scripts/setup.sh did that for this checkout")),
    (r"^\$EDITOR", ("skip", "a person edits the rule here; the scaffold's example rule stands in for theirs")),
    (r"--device cuda", ("skip", "needs a CUDA GPU (tests/e2e/test_gpu.py on the GPU host)")),
    (r"--executor ray", ("skip", "starts a Ray cluster (tests/e2e/test_ray.py)")),
    (r"^eqsat-test campaign examples/campaign\.toml -j 2", (
        "skip", "runs the 20 jobs of the example campaign (about an hour on 2 cores); tests/e2e/test_campaign.py runs "
                "campaigns, kill -9 and resume included")),
    (r"^eqsat-test report examples/campaign-out", ("skip", "reads the store of the campaign run above (skipped)")),
    (r"^eqsat-test fuzz --minutes 30", ("skip", "a 30-minute hunt; tests/e2e/test_fuzz.py runs a tiny one and resumes it")),
    (r"^python -m eqsat_test\.hunt --seed", ("run", (0,), {})),
    (r"^eqsat-test artifacts OUT/", ("skip", "the template of a command on a finding's folder; "
                                          "tests/e2e/test_artifacts.py runs it")),
    (r"^eqsat-test (run|fuzz)$", ("skip", "the command's name, not a command line")),
    (r"^eqsat-test MODEL\.py$", ("skip", "the template that the runs of the examples above fill in")),
    (r"^eqsat-test MODEL\.py --backend", ("run", OK_OR_FOUND, {"MODEL.py": "examples/mlp.py"})),
    (r"^eqsat-test MODEL\.py --grad", ("run", OK_OR_FOUND, {"MODEL.py": "examples/mlp.py -n 4"})),
    (r"^eqsat-test rules coverage MODEL\.\.\.", ("run", (0,), {"MODEL...": "examples/mlp.py"})),
    (r"^eqsat-test rules list \[--json\]", ("run", (0,), {"[--json]": "--json"})),
    (r"^python benchmarks/", ("skip", "a measurement (minutes): a benchmark script printing ratios for the README")),
    (r"^(scripts/try\.sh|eqsat-test examples/)", ("run", OK_OR_FOUND, {})),
    (r"^eqsat-test (generate|campaign|rules) ", ("run", (0,), {})),
]
FIGURE = ("skip", "a figure's command in the Numbers table: a measurement (minutes to hours, some on a GPU host), "
                  "run again when its figure is")


def readme_commands(text: str) -> list[tuple[str, str]]:
    """(where, command) in README order: lines of ```bash blocks, `$ ` lines of other blocks, and inline code
    that starts like a command (within the Numbers table: "figure")."""
    out: list[tuple[int, str, str]] = []
    for m in re.finditer(r"```(\w*)\n(.*?)```", text, re.S):
        pos = m.start(2)
        for ln in m.group(2).splitlines(keepends=True):
            cmd = ln[2:] if ln.startswith("$ ") else ln if m.group(1) == "bash" else ""
            cmd = re.sub(r"\s+#\s.*$", "", cmd).strip()  # a trailing comment
            if cmd:
                out.append((pos, "block", cmd))
            pos += len(ln)
    numbers = text.find("\n## Numbers")
    prose = re.sub(r"```.*?```", lambda m: " " * len(m.group(0)), text, flags=re.S)
    for m in re.finditer(r"`([^`]+)`", prose):
        cmd = " ".join(m.group(1).split())
        if _COMMAND.match(cmd):
            line_start = text.rfind("\n", 0, m.start()) + 1
            in_table = numbers >= 0 and m.start() > numbers and text.startswith("|", line_start)
            out.append((m.start(), "figure" if in_table else "inline", cmd))
    seen, ordered = set(), []
    for _, where, cmd in sorted(out):
        if cmd not in seen:
            seen.add(cmd)
            ordered.append((where, cmd))
    return ordered


def classify(where: str, cmd: str):
    if where == "figure":
        return FIGURE
    return next((action for pattern, action in RULES if re.search(pattern, cmd)), None)


COMMANDS = readme_commands(README.read_text())


def test_every_readme_command_is_run_or_skipped_for_a_reason():
    unknown = [cmd for where, cmd in COMMANDS if classify(where, cmd) is None]
    assert not unknown, f"README commands nobody classified (add them to RULES): {unknown}"
    runs = [cmd for where, cmd in COMMANDS if classify(where, cmd)[0] == "run"]
    assert "scripts/try.sh" in runs and any("--backend examples/backends/" in c for c in runs)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    """A folder laid out like the checkout after `scripts/setup.sh`: scripts/ and examples/ copied (commands
    write beside them), the set-up .venv linked, pyproject.toml as old as the set-up's stamp (so scripts/try.sh's
    set-up step finds nothing to do, as after a first run)."""
    ws = tmp_path_factory.mktemp("readme")
    for d in ("scripts", "examples"):
        shutil.copytree(REPO / d, ws / d, ignore=shutil.ignore_patterns("*-out", "__pycache__"))
    (ws / ".venv").symlink_to(REPO / ".venv")
    shutil.copy2(REPO / "pyproject.toml", ws / "pyproject.toml")
    stamp = REPO / ".venv" / ".eqsat-installed"
    if stamp.is_file():
        os.utime(ws / "pyproject.toml", (stamp.stat().st_mtime - 1, stamp.stat().st_mtime - 1))
        os.utime(ws / "scripts" / "setup.sh", (stamp.stat().st_mtime - 1, stamp.stat().st_mtime - 1))
    return ws


def _params():
    for where, cmd in COMMANDS:
        action = classify(where, cmd) or ("skip", "unclassified: see test_every_readme_command_is_run_or_skipped")
        marks = []
        if action[0] == "skip":
            marks.append(pytest.mark.skip(reason=action[1]))
        elif len(action) > 3:  # a known failure, until its fix is in
            marks.append(pytest.mark.xfail(strict=True, reason=action[3]))
        yield pytest.param(cmd, action, id=cmd[:60], marks=marks)


@pytest.mark.parametrize("cmd,action", list(_params()))
def test_readme_command(workspace, cmd, action):
    accepted, subs = action[1], action[2]
    line = cmd
    for k, v in subs.items():
        line = line.replace(k, v)
    env = dict(os.environ, PATH=f"{REPO / '.venv' / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")
    env.pop("PYTHONPATH", None)  # as a user's shell: the installed package, not the tests' path
    p = subprocess.run(["bash", "-c", line], cwd=workspace, env=env, capture_output=True, text=True, timeout=1800)
    assert p.returncode in accepted, f"{line!r} exited {p.returncode}:\n{p.stderr[-4000:]}"
    assert "eqsat-test: internal error" not in p.stderr, p.stderr[-4000:]
    if " --json" in line and line.split()[0] in ("eqsat-test", "scripts/try.sh"):
        json.loads(p.stdout)

"""`agenttest calibrate` through the real CLI: a built-in judge on the local OpenAI-compatible server, whose verdict
on every labelled line is known in advance (fakes/helper_brain.py: it passes when every 'quoted' phrase of the
criteria is in the output), measured against labels that agree with it on some lines and not on others."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from agenttest.statistics import wilson_interval
from e2e.conftest import Project, Run, helper_server
from e2e.test_judges import BRAIN_KEY, CONFIG, ECHO, run
from e2e.test_untrusted import log_of, ours
from fakes.helper_brain import HelperBrain
from fakes.openai_server import FakeOpenAI
from fakes.server import ScriptedServer
from report.test_annotations import commands_the_runner_would_run


@pytest.fixture
def brain() -> Iterator[tuple[HelperBrain, FakeOpenAI]]:
    with helper_server() as pair:
        yield pair


@pytest.fixture
def project(project: Project) -> Project:
    """The end-to-end project with the judges' tests' agenttest.yaml: built-in judges on the brain server."""
    project.write("agenttest.yaml", CONFIG)
    project.write("echo_agent.py", ECHO)
    return project


def labelled(line_id: str, output: str, criteria: str, label: bool, **more: Any) -> dict[str, Any]:
    return {"id": line_id, "input": "What is the refund policy?", "output": output, "criteria": criteria,
            "label": label, **more}


# Ten lines the judge agrees with on seven: 4 true positives, 1 false negative, 2 false positives, 3 true negatives.
KNOWN = [
    labelled("tp-1", "Refunds within 30 days.", "It gives the 'refund' window", True),
    labelled("tp-2", "Full refund, 30 days, with a receipt.", "It mentions the 'receipt'", True),
    labelled("tp-3", "We refund in 30 days.", "It says '30 days'", True),
    labelled("tp-4", "Refunds go to the card you paid with.", "It names the 'card'", True),
    labelled("fn-1", "You get your money back within a month.", "It gives the 'refund' window", True),
    labelled("fp-1", "Refund? Never.", "It gives the 'refund' window", False),
    labelled("fp-2", "No receipt, no refund, no exceptions.", "It mentions the 'receipt'", False),
    labelled("tn-1", "I cannot help with that.", "It gives the 'refund' window", False),
    labelled("tn-2", "Please call us.", "It says '30 days'", False),
    labelled("tn-3", "Ask someone else.", "It names the 'card'", False),
]


def calibrate(project: Project, server: FakeOpenAI, *args: str, env: dict[str, str] | None = None) -> Run:
    return run(project, server, "calibrate", "-i", "labels.jsonl", "--judge", "judge", *args, env=env)


def figures(project: Project, name: str = "calibration.json") -> dict[str, Any]:
    return json.loads((project.root / name).read_text())


def interval(successes: int, trials: int) -> list[float]:
    return [round(bound, 4) for bound in wilson_interval(successes, trials)]


def test_the_table_of_a_judge_whose_agreement_is_known(
        project: Project, brain: tuple[HelperBrain, FakeOpenAI]) -> None:
    helper, server = brain
    project.suite("labels.jsonl", *KNOWN)
    done = calibrate(project, server, "-o", "calibration.json")
    assert done.code == 0, done.stdout + done.stderr
    data = figures(project)
    assert (data["judged"], data["judge_errors"], data["invalid"], data["samples"]) == (10, 0, 0, 1)
    assert data["confusion"] == {"true_positives": 4, "false_negatives": 1, "false_positives": 2,
                                 "true_negatives": 3}
    assert data["accuracy"] == {"value": 0.7, "interval": interval(7, 10), "count": 7, "of": 10}
    assert data["true_positive_rate"] == {"value": 0.8, "interval": interval(4, 5), "count": 4, "of": 5}
    assert data["true_negative_rate"] == {"value": 0.6, "interval": interval(3, 5), "count": 3, "of": 5}
    assert data["kappa"] == 0.4                  # p_o = 0.7, p_e = 0.5·0.6 + 0.5·0.4 = 0.5
    assert data["majority_baseline"] == {"label": True, "value": 0.5, "interval": interval(5, 10), "count": 5,
                                         "of": 10}
    assert "self_contradiction" not in data and data["passed"] is True
    by_id = {line["id"]: line for line in data["results"]}
    assert by_id["fn-1"] == {"line": 5, "id": "fn-1", "label": True, "verdict": False, "agreed": False,
                             "reason": "the reply does not mention 'refund'"}
    assert by_id["tp-1"]["agreed"] is True and data["usage"]["judge"]["calls"] == 10
    assert helper.calls["judge"] == 10
    lines = done.stdout.splitlines()
    words = [" ".join(line.split()) for line in lines]
    assert lines[:3] == [
        "✗ labels.jsonl:5 fn-1: labelled pass, judged fail — the reply does not mention 'refund'",
        "✗ labels.jsonl:6 fp-1: labelled fail, judged pass — the reply mentions 'refund'",
        "✗ labels.jsonl:7 fp-2: labelled fail, judged pass — the reply mentions 'receipt'"]
    low, high = interval(7, 10)
    assert words[4:12] == [
        "Judge 'judge' against labels.jsonl: 10 lines judged", "", "value 95% interval",
        f"accuracy 0.70 [{low:.2f}, {high:.2f}] 7 of 10 agree with their label",
        "true-positive rate 0.80 [0.38, 0.96] 4 of 5 labelled pass, judged pass",
        "true-negative rate 0.60 [0.23, 0.88] 3 of 5 labelled fail, judged fail",
        "Cohen's κ 0.40 fair agreement beyond chance", "majority baseline 0.50 always pass: 5 of 10"]
    assert "Written: calibration.json" in lines


def test_the_judge_is_asked_exactly_as_an_agent_assertion_asks_it(
        project: Project, brain: tuple[HelperBrain, FakeOpenAI]) -> None:
    helper, server = brain
    criteria = "It gives the 'refund' window"
    project.suite("s.jsonl", {"id": "case", "input": "say Refunds within 30 days.",
                              "assert": {"type": "agent", "use": "agents:judge", "value": criteria}})
    project.suite("labels.jsonl", labelled("line", "Refunds within 30 days.", criteria, True,
                                           input="say Refunds within 30 days."))
    assert run(project, server, "-i", "s.jsonl", "--no-cache").code == 0
    assert calibrate(project, server, "--no-cache").code == 0
    suite_body, label_body = helper.bodies["judge"]
    assert label_body == suite_body        # system prompt, JSON mode, temperature, the payload to the byte


def test_replies_are_cached_as_a_runs_are_and_no_cache_asks_afresh(
        project: Project, brain: tuple[HelperBrain, FakeOpenAI]) -> None:
    helper, server = brain
    project.suite("labels.jsonl", *KNOWN[:3])
    assert calibrate(project, server).code == 0 and helper.calls["judge"] == 3
    again = calibrate(project, server, "-o", "calibration.json")
    assert again.code == 0 and helper.calls["judge"] == 3
    assert figures(project)["usage"]["judge"] == {"calls": 3, "cached": 3}
    assert "judge: 3 calls (3 cached)" in again.stdout
    assert calibrate(project, server, "--no-cache").code == 0 and helper.calls["judge"] == 6


def test_samples_count_how_often_the_judge_contradicts_itself(
        project: Project, brain: tuple[HelperBrain, FakeOpenAI]) -> None:
    helper, server = brain
    # At a temperature above 0 (the built-in judge samples at 0.7) the n-th call with these criteria votes as the
    # n-th letter says.
    project.suite("labels.jsonl",
                  labelled("split-pass", "x", "[judge:votes=PFP] one", True),
                  labelled("steady", "x", "[judge:votes=PPP] two", True),
                  labelled("split-fail", "x", "[judge:votes=FFP] three", True),
                  labelled("steady-fail", "x", "[judge:votes=FFF] four", False))
    done = calibrate(project, server, "--samples", "3", "-o", "calibration.json")
    assert done.code == 0, done.stdout + done.stderr
    data = figures(project)
    assert helper.calls["judge"] == 12 and data["samples"] == 3
    assert data["self_contradiction"] == {"value": 0.5, "interval": interval(2, 4), "count": 2, "of": 4}
    votes = {line["id"]: (line["verdict"], line["votes"]) for line in data["results"]}
    assert votes == {"split-pass": (True, {"passed": 2, "failed": 1}), "steady": (True, {"passed": 3, "failed": 0}),
                     "split-fail": (False, {"passed": 1, "failed": 2}),
                     "steady-fail": (False, {"passed": 0, "failed": 3})}
    assert data["accuracy"]["count"] == 3          # the majority is the verdict, as for an assertion
    assert {json.loads(body["messages"][-1]["content"])["criteria"]: body["temperature"]
            for body in helper.bodies["judge"]} == {"[judge:votes=PFP] one": 0.7, "[judge:votes=PPP] two": 0.7,
                                                    "[judge:votes=FFP] three": 0.7, "[judge:votes=FFF] four": 0.7}
    words = [" ".join(line.split()) for line in done.stdout.splitlines()]
    assert words[:2] == [
        "~ labels.jsonl:1 split-pass: judged pass as labelled, but (2 of 3 samples passed)",
        "✗ labels.jsonl:3 split-fail: labelled pass, judged fail (1 of 3 samples passed) — the reply does not mention"]
    assert "Judge 'judge' against labels.jsonl: 4 lines judged, 3 samples a line" in words
    assert "self-contradiction 0.50 [0.15, 0.85] 2 of 4 lines whose samples disagree" in words


def test_a_judge_pinned_at_temperature_0_is_warned_about_with_samples(
        project: Project, brain: tuple[HelperBrain, FakeOpenAI]) -> None:
    project.suite("labels.jsonl", *KNOWN[:2])
    done = run(project, brain[1], "calibrate", "-i", "labels.jsonl", "--judge", "pinned-judge", "--samples", "2")
    assert done.code == 0, done.stdout + done.stderr
    assert ("⚠ --samples 2: agent 'pinned-judge' runs at temperature 0, so its samples will most likely agree and no "
            "self-contradiction will show") in done.stderr


def test_judge_faults_are_counted_apart_never_as_disagreements(
        project: Project, brain: tuple[HelperBrain, FakeOpenAI]) -> None:
    project.suite("labels.jsonl", *KNOWN[:4],
                  labelled("prose", "x", "[judge:no-json] 'x'", True),
                  labelled("down", "x", "[judge:status=500] 'x'", False))
    done = calibrate(project, brain[1], "--retries", "0", "-o", "calibration.json")
    assert done.code == 1, done.stdout + done.stderr
    data = figures(project)
    assert (data["judged"], data["judge_errors"], data["lines"]) == (4, 2, 6)
    assert data["accuracy"] == {"value": 1.0, "interval": interval(4, 4), "count": 4, "of": 4}
    errors = {line["id"]: line["error"] for line in data["results"] if "error" in line}
    assert errors["prose"] == ("judge: its reply holds no verdict (a JSON object with 'passed' or 'score'): The "
                               "reply looks fine to me.")
    assert errors["down"].startswith("judge: HTTP 500 from http://127.0.0.1:")
    assert "verdict" not in {key for line in data["results"] if "error" in line for key in line}
    lines = done.stdout.splitlines()
    assert "! labels.jsonl:5 prose: judge error: " + errors["prose"] in lines
    assert "  not counted above: 2 judge errors" in lines
    assert "✗ not every line was judged: the figures are of the others" in lines


def test_a_judge_slower_than_the_timeout_is_a_judge_error_of_its_line(
        project: Project, brain: tuple[HelperBrain, FakeOpenAI]) -> None:
    # The judge never answers within the test: that the command ends at all is the line's timeout cutting the call.
    project.suite("labels.jsonl", KNOWN[0], labelled("slow", "x", "[judge:slow=100000] 'x'", True))
    done = calibrate(project, brain[1], "--timeout", "500ms", "-o", "calibration.json")
    assert done.code == 1, done.stdout + done.stderr
    data = figures(project)
    assert (data["judged"], data["judge_errors"]) == (1, 1)
    assert data["results"][1]["error"] == "timeout after 500ms waiting for the judge"


def test_a_dead_judge_judges_nothing_and_fails_every_bar(project: Project,
                                                         brain: tuple[HelperBrain, FakeOpenAI]) -> None:
    project.suite("labels.jsonl", *KNOWN[:3])
    done = run(project, brain[1], "calibrate", "-i", "labels.jsonl", "--judge", "dead-judge", "--retries", "0",
               "--min-kappa", "0.6", "--min-accuracy", "0.8", "-o", "calibration.json")
    assert done.code == 1, done.stdout + done.stderr
    data = figures(project)
    assert (data["judged"], data["judge_errors"]) == (0, 3) and data["accuracy"]["value"] is None
    assert all(line["error"].startswith("judge dead-judge: cannot connect to http://127.0.0.1:")
               for line in data["results"])
    assert data["shortfalls"] == [
        "Cohen's κ is undefined (no line was judged), so it cannot reach --min-kappa 0.6",
        "the accuracy is undefined (no line was judged), so it cannot reach --min-accuracy 0.8"]
    assert "✗ the accuracy is undefined (no line was judged), so it cannot reach --min-accuracy 0.8" in \
        done.stdout.splitlines()


@pytest.mark.parametrize(("bars", "code", "said"), [
    (("--min-kappa", "0.3"), 0, "✓ the judge clears the bars"),
    (("--min-kappa", "0.5"), 1, "✗ Cohen's κ 0.40 is below --min-kappa 0.5"),
    (("--min-accuracy", "0.7"), 0, "✓ the judge clears the bars"),
    (("--min-accuracy", "0.75", "--min-kappa", "0.4"), 1, "✗ the accuracy 0.70 is below --min-accuracy 0.75"),
])
def test_the_bars_set_the_exit_code(project: Project, brain: tuple[HelperBrain, FakeOpenAI], bars: tuple[str, ...],
                                    code: int, said: str) -> None:
    project.suite("labels.jsonl", *KNOWN)
    done = calibrate(project, brain[1], *bars, "-o", "calibration.json")
    assert done.code == code, done.stdout + done.stderr
    assert done.stdout.splitlines()[-2:] == [said, "Written: calibration.json"]
    assert figures(project)["passed"] is (code == 0)


def test_kappa_of_labels_of_one_kind_is_undefined_and_fails_a_kappa_bar(
        project: Project, brain: tuple[HelperBrain, FakeOpenAI]) -> None:
    project.suite("labels.jsonl", *KNOWN[:4])
    done = calibrate(project, brain[1], "--min-kappa", "0.6")
    assert done.code == 1
    assert ("✗ Cohen's κ is undefined (every label and every verdict is pass: label lines of both kinds), so it "
            "cannot reach --min-kappa 0.6") in done.stdout.splitlines()


def test_bad_label_lines_are_named_by_file_line_and_field_and_the_others_still_run(
        project: Project, brain: tuple[HelperBrain, FakeOpenAI]) -> None:
    helper, server = brain
    project.suite("labels.jsonl",
                  KNOWN[0],
                  {**KNOWN[1], "label": "yes"},
                  {key: value for key, value in KNOWN[2].items() if key != "criteria"},
                  {**{key: value for key, value in KNOWN[3].items() if key != "label"}, "lable": True},
                  '{"input": "x", "output": "y",',
                  '["input", "output"]',
                  {**KNOWN[5], "id": "tp-1"},
                  {**KNOWN[7], "criteria": "  "},
                  {**KNOWN[8], "conversation": "hello"},
                  KNOWN[9])
    done = calibrate(project, server, "-o", "calibration.json")
    assert done.code == 1, done.stdout + done.stderr
    assert helper.calls["judge"] == 2
    said = [line for line in done.stdout.splitlines() if line.startswith("✗ labels.jsonl:")]
    assert said[:8] == [
        "✗ labels.jsonl:2: label: expected true or false, got string",
        "✗ labels.jsonl:3: missing required field 'criteria'",
        "✗ labels.jsonl:4: missing required field 'label'; unknown key 'lable' (did you mean 'label'?)",
        "✗ labels.jsonl:5: invalid JSON: " + said[3].split("invalid JSON: ", 1)[1],
        "✗ labels.jsonl:6: expected a JSON object {\"input\", \"output\", \"criteria\", \"label\"}, got array",
        "✗ labels.jsonl:7: id: 'tp-1' is already the id of line 1",
        "✗ labels.jsonl:8: criteria: the criteria the judge decides by are missing",
        "✗ labels.jsonl:9: conversation: expected an array, got string"]
    data = figures(project)
    assert (data["judged"], data["invalid"], data["lines"]) == (2, 8, 10)
    assert data["invalid_lines"][0] == {"line": 2, "message": "label: expected true or false, got string"}
    assert "  not counted above: 8 invalid lines" in done.stdout.splitlines()


@pytest.mark.parametrize(("args", "message"), [
    (("-i", "labels.jsonl"), "Error: calibrate measures a judge: name it with --judge ID (or defaults.judge in "
                             "agenttest.yaml)"),
    (("-i", "labels.jsonl", "--judge", "jugde"), "Error: --judge (or defaults.judge): agent 'jugde' is not defined in "
                                                 "{root}/agenttest.yaml (did you mean 'judge'?)"),
    (("-i", "missing.jsonl", "--judge", "judge"), "Error: -i missing.jsonl: no such file"),
    (("-i", "empty.jsonl", "--judge", "judge"), "Error: -i empty.jsonl: no labelled lines in it (one JSON object a "
                                                'line: {"input", "output", "criteria", "label": true|false})'),
    (("-i", "labels.jsonl", "--judge", "judge", "--min-accuracy", "90"),
     "Error: --min-accuracy: a fraction from 0 to 1 (0.9 for 90 %), got 90"),
    (("-i", "labels.jsonl", "--judge", "judge", "--samples", "16"),
     "Error: --samples: expected a whole number from 1 to 15, got 16"),
    (("-i", "labels.jsonl", "--judge", "judge", "--timeout", "soon"), "Error: --timeout: "),
])
def test_usage_mistakes_exit_2_before_the_judge_is_asked(
        project: Project, brain: tuple[HelperBrain, FakeOpenAI], args: tuple[str, ...], message: str) -> None:
    helper, server = brain
    project.suite("labels.jsonl", *KNOWN[:2])
    project.write("empty.jsonl", "// nothing yet\n")
    done = run(project, server, "calibrate", *args)
    assert done.code == 2 and done.stderr.startswith(message.replace("{root}", str(project.root))), done.stderr
    assert helper.calls["judge"] == 0 and "Traceback" not in done.stderr


def test_a_spent_budget_leaves_the_lines_not_yet_asked(project: Project,
                                                       brain: tuple[HelperBrain, FakeOpenAI]) -> None:
    helper, server = brain
    project.suite("labels.jsonl", *KNOWN[:5])
    # Each verdict costs 120 tokens (fakes/helper_brain.py): the second crosses 200, one line at a time.
    done = calibrate(project, server, "--max-tokens", "200", "--parallel", "1", "--no-cache", "-o",
                     "calibration.json")
    assert done.code == 1, done.stdout + done.stderr
    assert helper.calls["judge"] == 2
    data = figures(project)
    assert (data["judged"], data["skipped"]) == (2, 3)
    assert data["results"][2]["skipped"] == "not asked: budget spent: 240 tokens of --max-tokens 200"
    assert "  not counted above: 3 lines not asked" in done.stdout.splitlines()


def test_a_recorded_calibration_replays_without_the_judge(project: Project,
                                                          brain: tuple[HelperBrain, FakeOpenAI]) -> None:
    helper, server = brain
    project.suite("labels.jsonl", *KNOWN)
    recorded = calibrate(project, server, "--record", "cassettes", "-o", "recorded.json")
    assert recorded.code == 0 and helper.calls["judge"] == 10
    assert (project.root / "cassettes" / "labels.jsonl.json").is_file()
    # It says where the recording went, as `run --record` does (after the table, before `Written:`).
    assert "Cassettes: cassettes/ (labels.jsonl.json)" in recorded.stdout.splitlines()
    with ScriptedServer("/gone") as gone:
        dead = f"http://127.0.0.1:{gone.port}/v1"
    replayed = run(project, server, "calibrate", "-i", "labels.jsonl", "--judge", "judge", "--replay", "cassettes",
                   "-o", "replayed.json", env={"BRAIN_URL": dead})
    assert replayed.code == 0, replayed.stdout + replayed.stderr
    assert helper.calls["judge"] == 10 and "Cassettes:" not in replayed.stdout
    recorded_figures, replayed_figures = figures(project, "recorded.json"), figures(project, "replayed.json")
    assert {**recorded_figures, "usage": None} == {**replayed_figures, "usage": None}


def test_in_github_actions_the_judges_words_cannot_become_workflow_commands(
        project: Project, brain: tuple[HelperBrain, FakeOpenAI]) -> None:
    project.suite("labels.jsonl", labelled("##[error]PWN-id", "no", "It says '##[error]PWN-reason'", True))
    env = {"BRAIN_URL": brain[1].base_url, "BRAIN_KEY": BRAIN_KEY, "DEAD_PORT": "9", "GITHUB_ACTIONS": "true"}
    code, lines, text = log_of("calibrate", "-i", "labels.jsonl", "--judge", "judge", cwd=project.root, env=env)
    assert code == 0 and "PWN-id" in text and "the reply does not mention '##[error]PWN-reason'" in text
    assert ours(commands_the_runner_would_run(lines)) == []
    # Without the guard the same lines would be commands: the test can fail.
    assert ours(commands_the_runner_would_run([line for line in lines if "stop-commands" not in line]))

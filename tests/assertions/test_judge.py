"""The `agent` assertion: its load-time checks, and its verdicts from a real HelperCaller asking a scripted judge."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

import pytest

from agenttest.agents.base import AgentRequest, AgentResponse
from agenttest.agents.cache import HelperCache
from agenttest.agents.helpers import HelperCaller
from agenttest.assertions.base import AssertionResult, AssertionSpec, EvalContext, evaluate_all, prepare_assertion
from agenttest.errors import AgentCallError, SuiteError

JUDGE = "workers.test.validator"
Reply = str | dict[str, Any] | AgentResponse | Exception


class ScriptedJudge:
    """An LLM judge at the edge: gives its replies in turn (the last one again once they run out), records requests."""

    def __init__(self, *replies: Reply, agent_id: str = JUDGE) -> None:
        self.id = agent_id
        self.replies = list(replies)
        self.requests: list[AgentRequest] = []

    async def call(self, request: AgentRequest) -> AgentResponse:
        self.requests.append(request)
        reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        if isinstance(reply, Exception):
            raise reply
        if isinstance(reply, AgentResponse):
            return reply
        return AgentResponse(content=reply) if isinstance(reply, str) else AgentResponse(data=reply)

    async def aclose(self) -> None:
        return None


class Pool:
    """The run's agent pool as a HelperCaller sees it."""

    def __init__(self, *agents: ScriptedJudge, fingerprint: str = "model-a", credentials: tuple[str, ...] = ()) -> None:
        self.agents = {agent.id: agent for agent in agents}
        self.fingerprints = {agent.id: fingerprint for agent in agents}
        self.secrets = list(credentials)

    def get(self, agent_id: str) -> ScriptedJudge:
        return self.agents[agent_id]

    def cacheable(self, agent_id: str) -> bool:
        return True

    def fingerprint(self, agent_id: str) -> str:
        return self.fingerprints[agent_id]

    def credentials(self, agent_id: str, connector: str | None = None) -> list[str]:
        return self.secrets
    def token_limit(self, agent_id: str, connector: str | None = None) -> str | None:
        return None


def prepared(value: Any = "the reply greets the user", use: Any = f"agents:{JUDGE}", **fields: Any) -> AssertionSpec:
    spec = AssertionSpec(type="agent", value=value, use=use, **fields)
    prepare_assertion(spec)
    return spec


def judged(judge: ScriptedJudge, spec: AssertionSpec | None = None, *, helpers: HelperCaller | None = None,
           output: Any = "Hello!", input: Any = "hi", conversation: list[dict[str, Any]] | None = None,
           ) -> AssertionResult:
    """Evaluate `spec` (a plain judge assertion by default) with `judge` behind a real HelperCaller."""
    helpers = helpers or HelperCaller(agents=Pool(judge))
    ctx = EvalContext(AgentResponse(content=output), input=input, helpers=helpers, conversation=conversation)
    [result] = asyncio.run(evaluate_all([spec or prepared()], ctx))
    return result


def suite_error(**fields: Any) -> SuiteError:
    with pytest.raises(SuiteError) as caught:
        prepared(**fields)
    return caught.value


# prepare


def test_prepare_sets_the_helper_agent() -> None:
    spec = prepared()
    assert (spec.helper_agent, spec.warnings) == (JUDGE, ())


def test_prepare_strips_spaces_around_the_agent_id() -> None:
    assert prepared(use=f"  agents: {JUDGE} ").helper_agent == JUDGE


@pytest.mark.parametrize("use", [None, "", "   ", 42])
def test_prepare_requires_use(use: Any) -> None:
    error = suite_error(use=use)
    assert error.where.field == "use"
    assert "requires 'use'" in error.message


def test_prepare_rejects_another_prefix() -> None:
    error = suite_error(use="scripts:check.py")
    assert error.where.field == "use"
    assert "must start with 'agents:'" in error.message
    assert "'scripts:check.py'" in error.message


@pytest.mark.parametrize("use", ["agents:", "agents:   "])
def test_prepare_rejects_an_empty_id_after_the_prefix(use: str) -> None:
    error = suite_error(use=use)
    assert error.where.field == "use"
    assert "names no agent after 'agents:'" in error.message


def test_prepare_reads_a_bare_id_as_an_agent_with_a_warning() -> None:
    spec = prepared(use="validator")
    assert spec.helper_agent == "validator"
    assert spec.warnings == ("use: 'validator' has no 'agents:' prefix; read as 'agents:validator'",)


def test_prepare_requires_criteria() -> None:
    error = suite_error(value=None)
    assert error.where.field == "value"
    assert "needs criteria" in error.message


def test_prepare_rejects_empty_metadata_criteria() -> None:
    assert suite_error(value=None, options={"metadata": {"criteria": ""}}).where.field == "value"


def test_prepare_accepts_criteria_in_metadata() -> None:
    assert prepared(value=None, options={"metadata": {"criteria": "polite"}}).helper_agent == JUDGE


def test_prepare_rejects_an_unknown_option_with_a_suggestion() -> None:
    error = suite_error(options={"treshold": 0.5})
    assert error.where.field == "options.treshold"
    assert "unknown option 'treshold'" in error.message
    assert "did you mean 'threshold'?" in error.message


def test_prepare_rejects_metadata_that_is_not_an_object() -> None:
    error = suite_error(options={"metadata": ["criteria"]})
    assert (error.where.field, error.message) == ("options.metadata", "expected an object, got array")


@pytest.mark.parametrize("connector", ["", 3, ["gpt"]])
def test_prepare_rejects_a_bad_connector(connector: Any) -> None:
    assert suite_error(options={"connector": connector}).where.field == "options.connector"


@pytest.mark.parametrize("threshold", [1.5, -0.1, True, "0.5", [0.5]])
def test_prepare_rejects_a_bad_threshold(threshold: Any) -> None:
    error = suite_error(options={"threshold": threshold})
    assert error.where.field == "options.threshold"
    assert "expected a number from 0 to 1" in error.message


@pytest.mark.parametrize("threshold", [0, 1, 0.7])
def test_prepare_accepts_a_threshold_from_zero_to_one(threshold: float) -> None:
    assert prepared(options={"threshold": threshold}).helper_agent == JUDGE


@pytest.mark.parametrize("samples", [0, 16, -1, True, 2.0, "3"])
def test_prepare_rejects_bad_samples(samples: Any) -> None:
    error = suite_error(options={"samples": samples})
    assert error.where.field == "options.samples"
    assert "expected a whole number from 1 to 15" in error.message


@pytest.mark.parametrize("samples", [1, 15])
def test_prepare_accepts_samples_from_one_to_fifteen(samples: int) -> None:
    assert prepared(options={"samples": samples}).helper_agent == JUDGE


# the request the judge gets


def test_judge_gets_one_user_message_with_criteria_input_and_output() -> None:
    judge = ScriptedJudge({"passed": True})
    judged(judge, output="Hello there", input="hi")
    [request] = judge.requests
    [message] = request.messages
    assert message["role"] == "user"
    assert json.loads(message["content"]) == {"criteria": "the reply greets the user", "input": "hi",
                                              "output": "Hello there"}


def test_judge_request_is_in_validator_mode_for_the_judge_role() -> None:
    judge = ScriptedJudge({"passed": True})
    judged(judge)
    [request] = judge.requests
    assert (request.agent, request.role) == (JUDGE, "judge")
    assert request.options["metadata"] == {"test_mode": "validator"}
    assert "connector" not in request.options


def test_judge_request_names_the_connector_when_set() -> None:
    judge = ScriptedJudge({"passed": True})
    judged(judge, prepared(options={"connector": "gpt-4o-mini"}))
    assert judge.requests[0].options["connector"] == "gpt-4o-mini"


def test_judge_request_merges_metadata_at_the_top_level() -> None:
    judge = ScriptedJudge({"passed": True})
    judged(judge, prepared(options={"metadata": {"rubric": "strict", "language": "en"}}))
    payload = json.loads(judge.requests[0].messages[0]["content"])
    assert (payload["rubric"], payload["language"], payload["criteria"]) == ("strict", "en",
                                                                           "the reply greets the user")
    assert "metadata" not in payload


def test_judge_request_takes_criteria_from_metadata_when_value_is_absent() -> None:
    judge = ScriptedJudge({"passed": True})
    judged(judge, prepared(value=None, options={"metadata": {"criteria": "polite"}}))
    assert json.loads(judge.requests[0].messages[0]["content"])["criteria"] == "polite"


def test_judge_request_carries_structured_output_and_the_conversation() -> None:
    judge = ScriptedJudge({"passed": True})
    conversation = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    judged(judge, output={"total": 12}, input=[{"role": "user", "content": "sum"}], conversation=conversation)
    payload = json.loads(judge.requests[0].messages[0]["content"])
    assert payload["output"] == {"total": 12}
    assert payload["input"] == [{"role": "user", "content": "sum"}]
    assert payload["conversation"] == conversation


# verdicts


def test_judge_passed_true_passes() -> None:
    result = judged(ScriptedJudge({"passed": True, "reason": "it greets"}))
    assert (result.passed, result.message, result.error_kind) == (True, "it greets", None)
    assert result.details == {"judge": JUDGE, "reason": "it greets"}
    assert result.expected == "the reply greets the user"


def test_judge_passed_false_fails_naming_the_judge() -> None:
    result = judged(ScriptedJudge('Verdict: {"passed": false, "reason": "no greeting"}'))
    assert (result.passed, result.error_kind) == (False, None)
    assert result.message == f"judge {JUDGE}: no greeting"


def test_judge_without_a_reason_says_what_it_found() -> None:
    assert judged(ScriptedJudge({"passed": True})).message == "the judge found the criteria met"
    assert judged(ScriptedJudge({"passed": False})).message == f"judge {JUDGE}: the judge found the criteria not met"


def test_judge_suggestions_are_in_details() -> None:
    result = judged(ScriptedJudge({"passed": False, "suggestions": "say hello"}))
    assert result.details["suggestions"] == ["say hello"]


def test_judge_score_is_reported() -> None:
    result = judged(ScriptedJudge({"passed": True, "score": 0.8}))
    assert (result.score, result.details["score"]) == (0.8, 0.8)


@pytest.mark.parametrize(("score", "passed"), [(0.7, True), (0.71, True), (0.69, False), (0.0, False)])
def test_threshold_decides_on_score_at_least_threshold(score: float, passed: bool) -> None:
    result = judged(ScriptedJudge({"score": score}), prepared(options={"threshold": 0.7}))
    assert result.passed is passed
    assert result.details["threshold"] == 0.7


def test_threshold_overrides_the_judges_passed() -> None:
    spec = prepared(options={"threshold": 0.8})
    assert judged(ScriptedJudge({"passed": False, "score": 0.9}), spec).passed is True
    assert judged(ScriptedJudge({"passed": True, "score": 0.5}), spec).passed is False


def test_threshold_comparison_is_in_the_message() -> None:
    spec = prepared(options={"threshold": 0.7})
    assert judged(ScriptedJudge({"score": 0.9, "reason": "good"}), spec).message == "good (score 0.9 ≥ threshold 0.7)"
    assert judged(ScriptedJudge({"score": 0.4, "reason": "weak"}), spec).message == (
        f"judge {JUDGE}: weak (score 0.4 < threshold 0.7)")


def test_threshold_with_a_reply_missing_a_score_is_an_error() -> None:
    result = judged(ScriptedJudge({"passed": True}), prepared(options={"threshold": 0.5}))
    assert (result.passed, result.error_kind) == (False, "judge")
    assert "has no 'score'" in result.message
    assert JUDGE in result.message


@pytest.mark.parametrize("score", [0.0, 0.49, 0.5, 0.9, 1.0])
def test_score_only_reply_without_threshold_is_a_judge_error(score: float) -> None:
    result = judged(ScriptedJudge({"score": score}))
    assert (result.passed, result.error_kind) == (False, "judge")
    assert result.message == f"judge {JUDGE}: its verdict has no 'passed' (a score decides only with options.threshold)"


def test_a_reply_cut_off_at_an_unknown_token_limit_is_a_judge_error_saying_so() -> None:
    result = judged(ScriptedJudge(AgentResponse(content='{"passed": true, "reason": "looks', finish_reason="length")))
    assert (result.passed, result.error_kind) == (False, "judge")
    assert result.message == (f"judge {JUDGE}: its reply was cut off at its token limit (finish_reason: length): "
                              "raise max_tokens")


def test_passed_wins_over_score_without_threshold() -> None:
    assert judged(ScriptedJudge({"passed": True, "score": 0.1})).passed is True


# samples


def test_samples_majority_decides_with_votes_and_samples_in_details() -> None:
    judge = ScriptedJudge({"passed": True, "reason": "a"}, {"passed": False, "reason": "b"},
                          {"passed": True, "reason": "c"})
    result = judged(judge, prepared(options={"samples": 3}))
    assert len(judge.requests) == 3
    assert result.passed is True
    assert result.details["votes"] == {"passed": 2, "failed": 1}
    assert result.details["samples"] == [{"passed": True, "score": None, "reason": "a"},
                                         {"passed": False, "score": None, "reason": "b"},
                                         {"passed": True, "score": None, "reason": "c"}]
    assert result.message == "a (2 of 3 samples passed)"


def test_samples_majority_of_failures_fails_with_an_agreeing_reason() -> None:
    judge = ScriptedJudge({"passed": True, "reason": "a"}, {"passed": False, "reason": "b"},
                          {"passed": False, "reason": "c"})
    result = judged(judge, prepared(options={"samples": 3}))
    assert result.passed is False
    assert result.message == f"judge {JUDGE}: b (1 of 3 samples passed)"


def test_samples_tie_does_not_pass() -> None:
    judge = ScriptedJudge({"passed": True}, {"passed": False})
    result = judged(judge, prepared(options={"samples": 2}))
    assert result.passed is False
    assert result.details["votes"] == {"passed": 1, "failed": 1}
    assert "a tie does not pass" in result.message


def test_samples_scores_are_averaged() -> None:
    judge = ScriptedJudge({"passed": True, "score": 0.6}, {"passed": True, "score": 0.9},
                          {"passed": True, "score": 0.9})
    result = judged(judge, prepared(options={"samples": 3}))
    assert result.score == 0.8


def test_samples_suggestions_are_merged_without_repeats() -> None:
    judge = ScriptedJudge({"passed": False, "suggestions": ["x", "y"]}, {"passed": False, "suggestions": ["y", "z"]})
    result = judged(judge, prepared(options={"samples": 2}))
    assert result.details["suggestions"] == ["x", "y", "z"]


def test_samples_with_one_unreadable_reply_is_an_error() -> None:
    judge = ScriptedJudge({"passed": True}, "I refuse to answer", {"passed": True})
    result = judged(judge, prepared(options={"samples": 3}))
    assert (result.passed, result.error_kind) == (False, "judge")


@pytest.mark.parametrize(("scores", "threshold", "passed", "note"), [
    ((0.9, 0.9, 0.0), 0.8, True, "(2 of 3 samples scored ≥ threshold 0.8; mean score 0.6)"),
    ((0.4, 0.4, 1.0), 0.5, False, "(1 of 3 samples scored ≥ threshold 0.5; mean score 0.6)")])
def test_samples_with_threshold_message_states_a_true_comparison(scores: tuple[float, ...], threshold: float,
                                                                 passed: bool, note: str) -> None:
    judge = ScriptedJudge(*({"score": score} for score in scores))
    result = judged(judge, prepared(options={"threshold": threshold, "samples": 3}))
    assert result.passed is passed
    assert result.message.endswith(note)


# errors: the judge could not decide


def test_agent_call_error_is_a_judge_error_naming_the_judge() -> None:
    result = judged(ScriptedJudge(AgentCallError("connection refused", "infra")))
    assert (result.passed, result.error_kind) == (False, "judge")
    assert result.message == f"judge {JUDGE}: connection refused"
    assert result.expected == "the reply greets the user"


def test_judge_raising_another_exception_is_a_judge_error() -> None:
    result = judged(ScriptedJudge(RuntimeError("provider bug")))
    assert result.error_kind == "judge"
    assert result.message == f"judge {JUDGE}: RuntimeError: provider bug"


@pytest.mark.parametrize("reply", ["Looks good to me!", {"verdict": "pass"}, {"passed": "perhaps"}, {"score": 7}],
                         ids=["prose", "other-keys", "bad-passed", "score-out-of-range"])
def test_unreadable_reply_is_a_judge_error(reply: Reply) -> None:
    result = judged(ScriptedJudge(reply))
    assert (result.passed, result.error_kind) == (False, "judge")
    assert result.message.startswith(f"judge {JUDGE}: ")


def test_no_helpers_available_is_a_judge_error() -> None:
    ctx = EvalContext(AgentResponse(content="Hello!"), input="hi")
    [result] = asyncio.run(evaluate_all([prepared()], ctx))
    assert (result.passed, result.error_kind) == (False, "judge")
    assert "no helper agents" in result.message


# negate and message


def test_negate_inverts_a_pass() -> None:
    result = judged(ScriptedJudge({"passed": True, "reason": "greets"}), prepared(negate=True))
    assert (result.passed, result.negate) == (False, True)
    assert result.message == "negated: greets"


def test_negate_inverts_a_fail() -> None:
    result = judged(ScriptedJudge({"passed": False}), prepared(negate=True))
    assert (result.passed, result.message) == (True, "negated assertion passed")


def test_negate_does_not_turn_an_error_into_a_pass() -> None:
    result = judged(ScriptedJudge("no verdict here"), prepared(negate=True))
    assert (result.passed, result.error_kind, result.negate) == (False, "judge", True)


def test_message_override_replaces_a_failure_message() -> None:
    result = judged(ScriptedJudge({"passed": False, "reason": "rude"}), prepared(message="should greet"))
    assert (result.passed, result.message) == (False, "should greet")


def test_message_override_leaves_a_pass_alone() -> None:
    result = judged(ScriptedJudge({"passed": True, "reason": "greets"}), prepared(message="should greet"))
    assert (result.passed, result.message) == (True, "greets")


def test_message_override_does_not_hide_an_error() -> None:
    result = judged(ScriptedJudge(AgentCallError("timed out")), prepared(message="should greet"))
    assert result.error_kind == "judge"
    assert result.message == f"judge {JUDGE}: timed out"


# usage


def test_usage_is_counted_for_the_judge_role() -> None:
    helpers = HelperCaller(agents=Pool(judge := ScriptedJudge(
        AgentResponse(data={"passed": True}, usage={"prompt_tokens": 10, "completion_tokens": 3}))))
    judged(judge, prepared(options={"samples": 2}), helpers=helpers)
    assert helpers.usage.roles == {"judge": {"calls": 2, "prompt_tokens": 20, "completion_tokens": 6}}


def test_usage_counts_a_call_whose_reply_is_unreadable() -> None:
    helpers = HelperCaller(agents=Pool(judge := ScriptedJudge(AgentResponse(content="?", usage={"total_tokens": 4}))))
    judged(judge, helpers=helpers)
    assert helpers.usage.roles["judge"] == {"calls": 1, "total_tokens": 4}


# cache


def cached_caller(judge: ScriptedJudge, directory: Path, fingerprint: str = "model-a",
                  credentials: tuple[str, ...] = ("sk-judge-1",), errors: io.StringIO | None = None) -> HelperCaller:
    cache = HelperCache(directory / "cache", checkout=directory / "repo", key_file=directory / "key", errors=errors)
    return HelperCaller(agents=Pool(judge, fingerprint=fingerprint, credentials=credentials), cache=cache)


def test_cache_answers_an_identical_second_evaluation(tmp_path: Path) -> None:
    judge = ScriptedJudge(AgentResponse(data={"passed": False, "reason": "rude"}, usage={"total_tokens": 9}))
    first = judged(judge, helpers=cached_caller(judge, tmp_path))
    second_caller = cached_caller(judge, tmp_path)
    second = judged(judge, helpers=second_caller)
    assert len(judge.requests) == 1
    assert second_caller.usage.roles["judge"] == {"calls": 1, "cached": 1}
    assert (second.passed, second.message) == (first.passed, first.message) == (False, f"judge {JUDGE}: rude")


def test_cache_asks_again_for_a_different_output(tmp_path: Path) -> None:
    judge = ScriptedJudge({"passed": True})
    judged(judge, helpers=cached_caller(judge, tmp_path), output="Hello!")
    judged(judge, helpers=cached_caller(judge, tmp_path), output="Go away.")
    assert len(judge.requests) == 2


def test_cache_asks_again_when_the_judge_fingerprint_changes(tmp_path: Path) -> None:
    judge = ScriptedJudge({"passed": True})
    judged(judge, helpers=cached_caller(judge, tmp_path, fingerprint="model-a"))
    judged(judge, helpers=cached_caller(judge, tmp_path, fingerprint="model-b"))
    assert len(judge.requests) == 2


def test_cache_does_not_keep_an_unreadable_reply(tmp_path: Path) -> None:
    judge = ScriptedJudge("I cannot judge this", {"passed": True})
    first = judged(judge, helpers=cached_caller(judge, tmp_path))
    second = judged(judge, helpers=cached_caller(judge, tmp_path))
    third_caller = cached_caller(judge, tmp_path)
    third = judged(judge, helpers=third_caller)
    assert (first.error_kind, second.passed, third.passed) == ("judge", True, True)
    assert len(judge.requests) == 2
    assert third_caller.usage.roles["judge"] == {"calls": 1, "cached": 1}


def test_cache_keeps_each_sample_separately(tmp_path: Path) -> None:
    judge = ScriptedJudge({"passed": True, "reason": "a"}, {"passed": False, "reason": "b"},
                          {"passed": True, "reason": "c"})
    spec = prepared(options={"samples": 3})
    first = judged(judge, spec, helpers=cached_caller(judge, tmp_path))
    second_caller = cached_caller(judge, tmp_path)
    second = judged(judge, spec, helpers=second_caller)
    assert len(judge.requests) == 3
    assert second_caller.usage.roles["judge"] == {"calls": 3, "cached": 3}
    assert second.details["samples"] == first.details["samples"]
    assert [sample["reason"] for sample in second.details["samples"]] == ["a", "b", "c"]


def test_cache_never_serves_a_sample_as_the_single_answer(tmp_path: Path) -> None:
    judge = ScriptedJudge({"passed": True, "reason": "a"}, {"passed": False, "reason": "b"},
                          {"passed": False, "reason": "c"})
    judged(judge, prepared(options={"samples": 2}), helpers=cached_caller(judge, tmp_path))
    single = judged(judge, helpers=cached_caller(judge, tmp_path))
    assert len(judge.requests) == 3          # samples are asked as samples (above temperature 0 for a built-in)
    assert [request.options["metadata"].get("samples") for request in judge.requests] == [2, 2, None]
    assert (single.passed, single.message) == (False, f"judge {JUDGE}: c")


def test_cache_trusts_only_entries_written_with_the_same_credentials_and_says_so_once(tmp_path: Path) -> None:
    judge = ScriptedJudge({"passed": False, "reason": "rude"})
    judged(judge, helpers=cached_caller(judge, tmp_path))
    said = io.StringIO()
    rotated = judged(judge, helpers=cached_caller(judge, tmp_path, credentials=("sk-judge-2",), errors=said))
    assert len(judge.requests) == 2 and rotated.passed is False
    assert said.getvalue().count("ignored an entry") == 1
    entry = next((tmp_path / "cache").rglob("*.json"))
    forged = json.loads(entry.read_text())
    forged["response"]["data"] = {"passed": True, "reason": "forged"}
    entry.write_text(json.dumps(forged))
    tampered = judged(judge, helpers=cached_caller(judge, tmp_path, credentials=("sk-judge-2",)))
    assert (tampered.passed, len(judge.requests)) == (False, 3)

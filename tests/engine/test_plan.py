"""What a run will do, decided before it starts: the `--run` selection, the shards, the suite's digest and the
helper agents — the same for every shard of a run and on every machine."""

from __future__ import annotations

import json
from pathlib import Path

from agenttest.cases import Case, InvalidCase, load_suite
from agenttest.engine.plan import Entry, entry_key, helper_agents, select, shard, suite_digest


def entries(tmp_path: Path, *cases: dict | str, name: str = "s.jsonl") -> list[Entry]:
    (tmp_path / name).write_text("".join((c if isinstance(c, str) else json.dumps(c)) + "\n" for c in cases))
    return load_suite([name], cwd=tmp_path, repo_root=tmp_path).entries


def ids(chosen: list[Entry]) -> list[str | None]:
    return [e.id for e in chosen]


def test_run_selects_by_unanchored_regex_or_by_tag(tmp_path: Path) -> None:
    suite = entries(tmp_path, {"id": "refund-1", "input": "x", "tags": ["money"]}, {"id": "greet", "input": "x"},
                    {"id": "no-refund", "input": "x", "tags": ["money", "slow"]}, "not json")
    assert ids(select(suite, None)) == ids(select(suite, "")) == ["refund-1", "greet", "no-refund", None]
    # the line that is no case has no id to match: it is kept, so a broken suite is never hidden by --run
    assert ids(select(suite, "refund")) == ["refund-1", "no-refund", None]
    assert ids(select(suite, "^refund")) == ["refund-1", None]
    assert ids(select(suite, "tag:money")) == ["refund-1", "no-refund", None]
    assert ids(select(suite, "tag:slow")) == ["no-refund", None]
    assert ids(select(suite, "tag:refund")) == [None]           # a tag, not an id


def test_an_entry_is_known_by_its_file_and_id_or_its_line(tmp_path: Path) -> None:
    case, broken = entries(tmp_path, {"id": "a", "input": "x"}, "not json")
    assert isinstance(case, Case) and isinstance(broken, InvalidCase)
    assert entry_key(case) == ("s.jsonl", "a")
    assert entry_key(broken) == ("s.jsonl", "line 2")
    assert entry_key(InvalidCase(message="m", source="agents:gen?count=2", id="gen-1")) == ("agents:gen?count=2",
                                                                                           "gen-1")
    assert entry_key(InvalidCase(message="m", line=1)) == ("", "line 1")         # a message given on the command line


def test_shards_cover_every_case_once_differ_by_at_most_one_and_follow_the_keys(tmp_path: Path) -> None:
    suite = entries(tmp_path, *[{"id": f"c{i:02d}", "input": "x"} for i in range(23)])
    parts = [shard(suite, k, 4) for k in range(1, 5)]
    assert sorted(p for part in parts for p in part) == list(range(23))
    assert sorted(len(part) for part in parts) == [5, 6, 6, 6]
    assert all(part == sorted(part) for part in parts)                       # in plan order
    reordered = list(reversed(suite))
    assert [sorted(reordered[p].id for p in shard(reordered, k, 4)) for k in range(1, 5)] == \
        [sorted(suite[p].id for p in part) for part in parts]                 # by key, not by position
    assert shard(suite, 1, 1) == list(range(23)) and shard([], 1, 3) == []
    for count in range(1, 24):
        for total in (2, 3, 4, 7):
            sizes = [len(shard(suite[:count], k, total)) for k in range(1, total + 1)]
            assert sum(sizes) == count and max(sizes) - min(sizes) <= 1, (count, total, sizes)


def test_the_digest_is_the_selection_whatever_its_order(tmp_path: Path) -> None:
    suite = entries(tmp_path, {"id": "a", "input": "x"}, {"id": "b", "input": "x"})
    other_file = entries(tmp_path, {"id": "a", "input": "x"}, {"id": "b", "input": "x"}, name="t.jsonl")
    digest = suite_digest(suite)
    assert len(digest) == 16 and int(digest, 16) >= 0
    assert suite_digest(list(reversed(suite))) == digest
    assert suite_digest(suite[:1]) != digest and suite_digest(other_file) != digest


def test_helper_agents_are_each_named_once_in_order_of_first_use(tmp_path: Path) -> None:
    judged = {"type": "agent", "use": "judge.b", "value": "polite"}
    suite = entries(tmp_path, {"id": "a", "input": "x", "assert": [judged, {"type": "agent", "use": "judge.a",
                                                                            "value": "kind"}]},
                    {"id": "b", "input": "x", "assert": judged},
                    {"id": "c", "input": "x", "simulator": {"use": "sim.x"},
                     "checkpoints": [{"id": "k", "assert": {"type": "contains", "value": "y"}}]},
                    {"id": "d", "input": "x", "simulator": {"use": "scripted", "replies": ["y"]},
                     "checkpoints": [{"id": "k", "assert": {"type": "contains", "value": "y"}}]})
    assert helper_agents(suite) == ["judge.b", "judge.a", "sim.x"]

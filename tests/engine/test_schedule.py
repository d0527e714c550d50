"""The scheduler: bounded concurrency, input-ordered results, fail-fast and interrupts."""

from __future__ import annotations

import asyncio
import gc
import weakref
from types import SimpleNamespace

from agenttest.engine.schedule import Scheduler
from agenttest.results import CaseResult


def _skipped(entry: tuple[str, float, str], reason: str) -> CaseResult:
    return CaseResult(id=entry[0], status="skipped", error=reason)


def _scheduler(entries, parallel=2, stop_after_failure=False, log=None):
    running = {"now": 0, "peak": 0}

    async def run_one(entry):
        running["now"] += 1
        running["peak"] = max(running["peak"], running["now"])
        try:
            await asyncio.sleep(entry[1])
        finally:
            running["now"] -= 1
        return CaseResult(id=entry[0], status=entry[2])

    finished: list[str] = [] if log is None else log

    def on_finish(result, entry):
        finished.append(result.id)
        if stop_after_failure and result.status == "failed":
            scheduler.stop(f"not run: stopped after {result.id}")

    scheduler = Scheduler(entries, run_one, _skipped, parallel=parallel, on_finish=on_finish)
    return scheduler, running, finished


def test_results_keep_input_order_and_concurrency_is_bounded() -> None:
    entries = [(f"c{i}", 0.05 * (5 - i), "passed") for i in range(5)]
    scheduler, running, finished = _scheduler(entries, parallel=3)
    results = asyncio.run(scheduler.run())
    assert [r.id for r in results] == ["c0", "c1", "c2", "c3", "c4"]
    assert running["peak"] == 3
    assert finished != ["c0", "c1", "c2", "c3", "c4"]  # completion order differs from input order


def test_stop_from_on_finish_ends_scheduling_but_finishes_what_runs() -> None:
    entries = [("bad", 0.01, "failed"), ("slow", 0.1, "passed"), ("next1", 0.01, "passed"), ("next2", 0, "passed")]
    scheduler, _, _ = _scheduler(entries, parallel=2, stop_after_failure=True)
    results = asyncio.run(scheduler.run())
    assert [(r.id, r.status) for r in results] == [
        ("bad", "failed"), ("slow", "passed"), ("next1", "skipped"), ("next2", "skipped")]
    assert results[2].error == "not run: stopped after bad"


def test_interrupt_cancels_in_flight_and_skips_the_rest() -> None:
    forever = float("inf")
    entries = [("quick", 0, "passed"), ("slow1", forever, "passed"), ("slow2", forever, "passed"),
               ("never", 0, "passed")]
    scheduler, running, finished = _scheduler(entries, parallel=2)

    async def main():
        task = asyncio.create_task(scheduler.run())
        while finished != ["quick"] or running["now"] < 2:      # quick is done, slow1 and slow2 are running
            await asyncio.sleep(0)
        scheduler.interrupt()
        # It ends only if the interrupt cancels them (the bound turns a hang into a failure).
        return await asyncio.wait_for(task, 60)

    results = asyncio.run(main())
    assert scheduler.interrupted
    assert [(r.id, r.status, r.error) for r in results] == [
        ("quick", "passed", None), ("slow1", "skipped", "interrupted"), ("slow2", "skipped", "interrupted"),
        ("never", "skipped", "interrupted")]
    assert sorted(finished) == ["never", "quick", "slow1", "slow2"]    # every result is reported, run or not


def test_entries_added_as_others_finish_run_next_side_by_side() -> None:
    # Two at a time: `seed` ends first and adds three entries; they start before `later`, which had not started.
    # Results follow the entries as they ended up.
    entries = [("seed", 0, "passed"), ("long", 0.3, "passed"), ("later", 0, "passed")]
    log: list[str] = []
    added = [("more1", 0.1, "passed"), ("more2", 0.1, "failed"), ("more3", 0.1, "passed")]
    scheduler, running, finished = _scheduler(entries, parallel=2, log=log)
    original = scheduler._on_finish

    def on_finish(result, entry):
        original(result, entry)
        if entry[0] == "seed":
            scheduler.add(added)

    scheduler._on_finish = on_finish
    results = asyncio.run(scheduler.run())
    assert [r.id for r in results] == ["seed", "long", "more1", "more2", "more3", "later"]
    assert [r.status for r in results] == ["passed", "passed", "passed", "failed", "passed", "passed"]
    assert running["peak"] == 2
    assert sorted(finished) == sorted(r.id for r in results)


def test_a_worker_with_nothing_to_start_waits_for_what_a_busy_one_adds() -> None:
    # One entry, two workers: the second has nothing to start when the first is busy, and must still run what
    # the first adds when it finishes (it would have ended, leaving the added entry to the first alone).
    entries = [("first", 0.05, "passed")]
    scheduler, running, _ = _scheduler(entries, parallel=2)
    original = scheduler._on_finish

    def on_finish(result, entry):
        original(result, entry)
        if entry[0] == "first":
            scheduler.add([("a", 0.1, "passed"), ("b", 0.1, "passed")])

    scheduler._on_finish = on_finish
    results = asyncio.run(scheduler.run())
    assert [r.id for r in results] == ["first", "a", "b"] and running["peak"] == 2


def test_entries_added_after_a_stop_are_skipped_saying_why() -> None:
    entries = [("bad", 0, "failed"), ("next", 0, "passed")]
    scheduler, _, finished = _scheduler(entries, parallel=1, stop_after_failure=True)
    original = scheduler._on_finish

    def on_finish(result, entry):
        original(result, entry)
        if entry[0] == "bad":
            scheduler.add([("again", 0, "passed")])

    scheduler._on_finish = on_finish
    results = asyncio.run(scheduler.run())
    assert [(r.id, r.status, r.error) for r in results] == [
        ("bad", "failed", None), ("again", "skipped", "not run: stopped after bad"),
        ("next", "skipped", "not run: stopped after bad")]
    assert sorted(finished) == ["again", "bad", "next"]


def test_a_scheduler_that_keeps_no_results_lets_each_entry_go_once_it_is_reported() -> None:
    class Entry:
        def __init__(self, name: str, status: str) -> None:
            self.name, self.status = name, status

    entries = [Entry("a", "passed"), Entry("b", "failed"), Entry("c", "passed")]
    held = [weakref.ref(entry) for entry in entries]
    reported: list[tuple[str, str]] = []

    async def run_one(entry: Entry) -> CaseResult:
        await asyncio.sleep(0)
        return CaseResult(id=entry.name, status=entry.status)  # type: ignore[arg-type]

    def on_finish(result: CaseResult, entry: Entry) -> None:
        reported.append((result.id, entry.name))

    scheduler = Scheduler(entries, run_one, lambda entry, reason: CaseResult(id=entry.name, status="skipped"),
                          parallel=2, on_finish=on_finish, keep=False)
    del entries
    assert asyncio.run(scheduler.run()) == []
    assert sorted(reported) == [("a", "a"), ("b", "b"), ("c", "c")]
    gc.collect()
    assert [ref() for ref in held] == [None, None, None]       # the scheduler holds none of them any more


def _telling_scheduler(entries, run_one, parallel, log):
    """A scheduler whose `on_start` logs at once and whose `on_finish` puts its report off (`later`), as the
    engine's does."""
    scheduler = Scheduler(entries, run_one, _skipped, parallel=parallel,
                          on_start=lambda entry: log.append(f"start {entry}"),
                          on_finish=lambda result, entry: scheduler.later(log.append, f"report {result.id}"))
    return scheduler


def test_replies_that_come_in_together_send_the_next_requests_before_any_report() -> None:
    log: list[str] = []

    async def main() -> list[CaseResult]:
        group = asyncio.get_running_loop().create_future()      # the first four replies come in together

        async def run_one(entry):
            if entry < 4:
                await group
            else:
                await asyncio.sleep(0.01)
            return CaseResult(id=f"c{entry}", status="passed")

        scheduler = _telling_scheduler(list(range(8)), run_one, 4, log)
        asyncio.get_running_loop().call_later(0.01, group.set_result, None)
        return await scheduler.run()

    results = asyncio.run(main())
    assert [r.id for r in results] == [f"c{i}" for i in range(8)]
    first_report = log.index("report c0")
    assert {"start 4", "start 5", "start 6", "start 7"} <= set(log[:first_report])
    assert [line for line in log if line.startswith("report")][:4] == ["report c0", "report c1", "report c2",
                                                                      "report c3"]
    assert sorted(line for line in log if line.startswith("report")) == [f"report c{i}" for i in range(8)]


def test_a_worker_that_never_waits_reports_each_entry_before_it_starts_the_one_after_next() -> None:
    log: list[str] = []

    async def run_one(entry):           # a replay: nothing to wait for
        return CaseResult(id=f"c{entry}", status="passed")

    results = asyncio.run(_telling_scheduler(list(range(5)), run_one, 1, log).run())
    assert len(results) == 5
    assert log == ["start 0", "start 1", "report c0", "start 2", "report c1", "start 3", "report c2", "start 4",
                   "report c3", "report c4"]


def test_a_report_put_off_that_raises_surfaces_from_run() -> None:
    async def run_one(entry):
        await asyncio.sleep(0)
        return CaseResult(id=f"c{entry}", status="passed")

    def broken(result, entry):
        raise KeyError("our bug")

    async def main() -> None:
        told: list[str] = []
        scheduler = Scheduler([0, 1, 2], run_one, _skipped, parallel=2,
                              on_finish=lambda result, entry: (scheduler.later(broken, result, entry),
                                                               scheduler.later(told.append, result.id)))
        try:
            await scheduler.run()
        except KeyError as exc:
            assert exc.args == ("our bug",)
            assert sorted(told) == ["c0", "c1", "c2"]      # the others were still told
        else:
            raise AssertionError("the report's error was lost")

    asyncio.run(main())


def test_what_is_told_later_is_flushed_each_turn_and_in_a_streak_that_never_waits(monkeypatch) -> None:
    """The reporters' writes go out together (`flush`) once the loop has told them of what finished in its turn;
    entries that finish without the loop turning (a replay, an agent that blocks) flush at least every
    FLUSH_EVERY seconds, and everything is flushed before `run` returns. The scheduler's clock is the test's: each
    blocking entry takes 0.03 s of it."""
    clock = [1000.0]
    monkeypatch.setattr("agenttest.engine.schedule.time", SimpleNamespace(monotonic=lambda: clock[0]))
    monkeypatch.setattr("agenttest.engine.schedule.FLUSH_EVERY", 0.05)
    told: list[str] = []
    flushes: list[list[str]] = []

    async def run_one(entry):
        if entry[1] == "wait":
            await asyncio.sleep(0.001)
        else:
            clock[0] += 0.03        # a blocking call: no turn of the loop until the streak ends
        return CaseResult(id=entry[0], status="passed")

    def on_finish(result, entry):
        scheduler.later(told.append, result.id)

    entries = [("w0", "wait"), ("w1", "wait"), *[(f"b{i}", "block") for i in range(6)]]
    scheduler = Scheduler(entries, run_one, _skipped, parallel=1, on_finish=on_finish,
                          flush=lambda: flushes.append(list(told)))
    asyncio.run(scheduler.run())
    assert told == [entry[0] for entry in entries]
    # w0 in the turn after it finished (w1 was waiting). In the streak each entry tells what the one before it put
    # off, and flushes once 0.05 s have passed since the last flush: at b1 (+0.06 s), b3 (+0.12 s), b5 (+0.18 s).
    # Then the rest, before `run` returned (the turn the streak had put off, and the end of the run).
    streak = [["w0", "w1", "b0"], ["w0", "w1", "b0", "b1", "b2"], ["w0", "w1", "b0", "b1", "b2", "b3", "b4"]]
    assert flushes == [["w0"], *streak, told, told], flushes

"""The fault matrix's own logic (bench/faults.py): parsing, the schedule, the verdicts."""

from __future__ import annotations

import random

import pytest

from bench.faults import KINDS, Fault, Round, assess, parse, schedule


def test_parse_takes_all_or_a_list_and_refuses_unknown_kinds():
    assert parse(None) == ()
    assert parse("all") == parse("") == KINDS
    assert parse("web, pg") == ("web", "pg")
    with pytest.raises(ValueError, match="unknown fault"):
        parse("web,disk")


def test_faults_strike_at_random_moments_inside_the_run_and_apart():
    for seed in range(50):
        faults = schedule(KINDS, 30.0, random.Random(seed))
        assert sorted(f.kind for f in faults) == sorted(KINDS)
        moments = sorted(f.at_offset for f in faults)
        assert moments[0] >= 0.15 * 30 and moments[-1] <= 0.8 * 30
        assert all(b - a >= 3.9 for a, b in zip(moments, moments[1:], strict=False))
    first = [f.kind for f in schedule(KINDS, 30.0, random.Random(1))]
    assert any([f.kind for f in schedule(KINDS, 30.0, random.Random(s))] != first for s in range(9))


def test_recovery_is_the_time_to_the_affected_users_next_turn():
    fault = Fault("redis", 10.0, at=100.0)
    rounds = [
        Round(1, start=99.0, done=101.5),  # in flight: 1.5 s after the fault
        Round(2, start=99.5, done=103.0),  # in flight: 3.0 s after the fault
        Round(3, start=95.0, done=96.0),  # done before the fault
        Round(4, start=101.0, done=101.4),  # started after it: not in flight
    ]
    verdict = assess([fault], rounds)
    assert verdict["faults"][0]["affected_users"] == 2
    assert verdict["faults"][0]["recovery_s"] == 3.0
    assert verdict["faults_survived"] == 1.0 and verdict["worst_recovery_s"] == 3.0


def test_with_nobody_in_flight_the_next_answers_measure_the_recovery():
    verdict = assess([Fault("pg", 5.0, at=50.0)], [Round(1, start=50.5, done=51.25)])
    assert verdict["faults"][0]["affected_users"] == 1
    assert verdict["faults"][0]["recovery_s"] == 1.25


def test_a_round_that_never_finished_near_a_fault_means_it_was_not_survived():
    faults = [Fault("web", 5.0, at=50.0), Fault("pg", 20.0, at=80.0)]
    rounds = [Round(7, start=49.0, done=None), Round(8, start=79.0, done=80.5)]
    verdict = assess(faults, rounds)
    assert [f["survived"] for f in verdict["faults"]] == [False, True]
    assert verdict["faults"][0]["users_without_next_turn"] == [7]
    assert verdict["faults_survived"] == 0.5

"""The counters' guard (collectors/counters.py) reading by reading, with its exact words: a counter
exported never falls and never rises faster than its most; a reset adds what was counted since; a
bad read is skipped and said; the same impossible reading `settle` times in a row is a new base,
the jump booked nowhere. The edges are pinned (a rise of exactly the most is taken, one more is
not), so a changed comparison or a lost slack shows here, not in a year of a day book."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from collectors.counters import ANY_COUNT, BY_UNIT, CounterBook, CounterGuard, Most, _labels, _n, default_most


@dataclass(frozen=True)
class S:
    metric: str
    value: float
    labels: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Spec:
    kind: str


KINDS = {"x_joules_total": Spec("counter"), "x_watts": Spec("gauge")}
MOST = {"x_joules_total": Most(10.0, 5.0)}  # 10 a second, 5 at once beyond that


def feed(book: CounterBook, readings: list[tuple[float, float]]) -> list[tuple[float | None, list[str]]]:
    """(exported value or None, words) for each (time, reading) of one series."""
    out = []
    for at, value in readings:
        samples, said = book.judge("c", [S("x_joules_total", value)], KINDS, MOST, at)
        out.append((samples[0].value if samples else None, said))
    return out


def test_a_rise_of_exactly_the_most_is_taken_and_one_more_is_a_bad_read() -> None:
    book = CounterBook()
    got = feed(book, [(0, 100.0), (10, 205.0), (20, 310.1)])  # 10 s: at most 10*10+5 = 105
    assert got[0] == (100.0, [])
    assert got[1] == (205.0, [])
    assert got[2] == (205.0, ["x_joules_total: moved from 205 to 310.1 in 10 s, more than it can (105): "
                              "a bad read, skipped"])


def test_a_counter_untouched_is_exported_to_the_bit() -> None:
    book = CounterBook()
    assert [v for v, _ in feed(book, [(0, 1.5), (1, 2.25), (2, 3.125)])] == [1.5, 2.25, 3.125]


def test_a_reset_adds_what_was_counted_since_and_never_falls() -> None:
    book = CounterBook()
    got = feed(book, [(0, 1000.0), (10, 1050.0), (20, 30.0), (30, 60.0)])
    assert [v for v, _ in got] == [1000.0, 1050.0, 1080.0, 1110.0]
    assert all(said == [] for _, said in got)


def test_a_reset_to_more_than_could_be_counted_since_is_a_bad_read() -> None:
    book = CounterBook()
    got = feed(book, [(0, 1000.0), (1, 900.0)])  # a reset that counted 900 in 1 s: at most 15
    assert got[1] == (1000.0, ["x_joules_total: moved from 1,000 to 900 in 1 s, more than it can (15): "
                               "a bad read, skipped"])


def test_a_negative_reading_is_skipped_and_the_last_value_exported_again() -> None:
    book = CounterBook()
    assert feed(book, [(0, -1.0)]) == [(None, ["x_joules_total: read -1: a counter is never negative; skipped"])]
    assert feed(book, [(1, 50.0), (2, -3.0)])[1] == (50.0, ["x_joules_total: read -3: a counter is never negative; "
                                                             "skipped"])


def test_the_same_impossible_reading_settle_times_in_a_row_is_a_new_base_booked_nowhere() -> None:
    book = CounterBook(settle=3)
    got = feed(book, [(0, 100.0), (10, 5000.0), (20, 5001.0), (30, 5002.0), (40, 5012.0)])
    assert [v for v, _ in got] == [100.0, 100.0, 100.0, 100.0, 110.0]
    assert got[3][1] == ["x_joules_total: 3 readings in a row agree on 5,002: taken as its new base, "
                         "the jump booked nowhere"]
    assert got[4][1] == []


def test_impossible_readings_that_disagree_with_each_other_never_settle() -> None:
    book = CounterBook(settle=2)
    got = feed(book, [(0, 100.0), (1, 5000.0), (2, 9000.0), (3, 13000.0)])
    assert [v for v, _ in got] == [100.0, 100.0, 100.0, 100.0]
    assert all("bad read" in said[0] for _, said in got[1:])


def test_a_good_reading_between_two_bad_ones_starts_the_count_again() -> None:
    book = CounterBook(settle=2)
    got = feed(book, [(0, 100.0), (1, 5000.0), (2, 110.0), (3, 5000.0), (4, 5000.0)])
    assert [v for v, _ in got] == [100.0, 100.0, 110.0, 110.0, 110.0]
    assert "new base" in got[4][1][0]


def test_gauges_and_unknown_metrics_pass_untouched() -> None:
    book = CounterBook()
    samples = [S("x_watts", 5.0), S("x_watts", -5.0), S("y_unknown_total", -1.0)]
    out, said = book.judge("c", samples, KINDS, MOST, 0.0)
    assert out == samples and said == []


def test_a_counter_without_a_limit_of_its_own_gets_its_units_most() -> None:
    book = CounterBook()
    kinds = {"x_joules_total": Spec("counter")}
    book.judge("c", [S("x_joules_total", 0.0)], kinds, {}, 0.0)
    out, said = book.judge("c", [S("x_joules_total", 1e5 + 3.6e6)], kinds, {}, 1.0)
    assert out[0].value == 1e5 + 3.6e6 and said == []
    out, said = book.judge("c", [S("x_joules_total", 1e12)], kinds, {}, 2.0)
    assert out[0].value == 1e5 + 3.6e6 and said


def test_series_are_kept_apart_by_collector_metric_and_labels_and_forget_drops_one_collector() -> None:
    book = CounterBook()
    a, b = S("x_joules_total", 100.0, (("source", "a"),)), S("x_joules_total", 1e9, (("source", "b"),))
    book.judge("c", [a, b], KINDS, MOST, 0.0)
    out, said = book.judge("c", [S("x_joules_total", 5e8, (("source", "b"),))], KINDS, MOST, 1.0)
    assert out[0].value == 1e9  # b's reset to 5e8 in 1 s: more than it can count
    assert said == ['x_joules_total{source="b"}: moved from 1,000,000,000 to 500,000,000 in 1 s, more than '
                    'it can (15): a bad read, skipped']
    out, _ = book.judge("d", [S("x_joules_total", 7.0, (("source", "a"),))], KINDS, MOST, 1.0)
    assert out[0].value == 7.0  # another collector's series of the same name: its own
    book.forget("c")
    out, said = book.judge("c", [S("x_joules_total", 3.0, (("source", "a"),))], KINDS, MOST, 2.0)
    assert (out[0].value, said) == (3.0, [])  # starts again from its next reading
    out, _ = book.judge("d", [S("x_joules_total", 6.0, (("source", "a"),))], KINDS, MOST, 2.0)
    assert out[0].value == 13.0  # d's was not forgotten: a reset, 7 + 6


def test_at_most_twenty_bad_reads_are_said_per_run() -> None:
    book = CounterBook()
    first = [S("x_joules_total", 0.0, (("n", str(i)),)) for i in range(30)]
    book.judge("c", first, KINDS, MOST, 0.0)
    _, said = book.judge("c", [S("x_joules_total", 1e6, (("n", str(i)),)) for i in range(30)], KINDS, MOST, 1.0)
    assert len(said) == 20


def test_a_time_going_backwards_allows_only_the_slack() -> None:
    book = CounterBook()
    got = feed(book, [(100, 0.0), (50, 5.0), (40, 11.0)])
    assert [v for v, _ in got] == [0.0, 5.0, 5.0]


@pytest.mark.parametrize(("x", "words"), [(259_200_000, "259,200,000"), (100_000, "100,000"), (99_999.5, "99999.5"),
                                          (12.0, "12"), (0.25, "0.25"), (-3.0, "-3"), (-250_000.0, "-250,000")])
def test_a_reading_is_said_without_exponents(x: float, words: str) -> None:
    assert _n(x) == words


def test_labels_are_said_as_prometheus_writes_them() -> None:
    assert _labels(()) == ""
    assert _labels((("a", "1"), ("b", "x"))) == '{a="1",b="x"}'


@pytest.mark.parametrize(("metric", "most"), [("eth0_bytes_total", Most(5e10, 1e6)), ("cpu_seconds_total", Most(1024.0, 1.0)),
                                              ("x_joules_total", Most(1e5, 3.6e6)), ("x_errors_total", ANY_COUNT)])
def test_each_unit_has_its_own_most(metric: str, most: Most) -> None:
    assert default_most(metric) == most
    assert len(BY_UNIT) == 3 and ANY_COUNT == Most(1e9, 1000.0)


# -- the heat pump's guard (CounterGuard): the same rules over a running total --------------------------


def guard() -> CounterGuard:
    return CounterGuard(rate=1.0, slack=2.0, ceiling=1000.0, settle=3)


def test_a_guards_first_reading_is_judged_on_the_ceiling_alone() -> None:
    g = guard()
    assert g.check("k", 1000.0, 0.0) is None
    g = guard()
    assert g.check("k", 1000.5, 0.0) == "k read 1000.5: impossible for this counter (more than 1000); skipped"
    assert g.check("k", -1.0, 0.0) == "k read -1: impossible for this counter (more than 1000); skipped"
    assert g.check("k", float("nan"), 0.0) is not None


def test_a_guard_takes_a_rise_within_its_rate_and_a_little_fall_within_its_slack() -> None:
    g = guard()
    g.seed("k", 100.0, 0.0)
    assert g.check("k", 112.0, 10.0) is None  # 10 s at 1/s + 2
    assert g.check("k", 110.0, 11.0) is None  # 2 below: the counter's own rounding
    assert g.check("k", 107.9, 12.0) == ("k fell from 110 to 107.9: a bad read, or a counter set back (it is taken as "
                                         "its new base after 3 readings agree), skipped")
    assert g.check("k", 200.0, 13.0) == ("k jumped from 110 to 200 within 2 s, more than the device can make (4): "
                                         "a bad read, skipped")


def test_a_guard_takes_a_new_base_after_settle_readings_agree() -> None:
    g = guard()
    g.seed("k", 100.0, 0.0)
    assert g.check("k", 500.0, 1.0) is not None
    assert g.check("k", 501.0, 2.0) is not None
    assert g.check("k", 502.0, 3.0) == "rebased"
    assert g.check("k", 503.0, 4.0) is None
    assert g.most(-5.0) == 2.0 and g.most(3.0) == 5.0


# -- the edges make mutation found unpinned ------------------------------------------------------------


def test_a_reading_just_past_a_hundred_thousand_is_said_with_commas() -> None:
    assert _n(100000.5) == "100,000"


def test_a_counter_that_stands_still_is_taken_as_it_is_not_as_a_reset() -> None:
    book = CounterBook()
    got = feed(book, [(0, 1e6), (1, 1e6), (2, 1e6)])
    assert [v for v, _ in got] == [1e6, 1e6, 1e6] and all(said == [] for _, said in got)


def test_impossible_readings_agree_up_to_exactly_the_most_since_the_first_and_no_further() -> None:
    book = CounterBook(settle=2)  # Most(10, 5): within 2 s two readings may differ by 25
    assert [v for v, _ in feed(book, [(0, 100.0), (10, 5000.0), (12, 5025.0)])] == [100.0, 100.0, 100.0]
    assert book._series[("c", "x_joules_total", ())].offset != 0  # taken as the new base
    book = CounterBook(settle=2)
    feed(book, [(0, 100.0), (10, 5000.0), (12, 5026.0)])
    assert book._series[("c", "x_joules_total", ())].offset == 0  # 26 apart: not the same reading again
    book = CounterBook(settle=2)
    feed(book, [(0, 100.0), (10, 5000.0), (10.5, 5012.0)])  # half a second: 10 apart at most
    assert book._series[("c", "x_joules_total", ())].offset == 0


def test_settle_counts_every_agreeing_reading_once() -> None:
    book = CounterBook(settle=4)
    got = feed(book, [(0, 100.0), (10, 5000.0), (20, 5000.0), (30, 5000.0), (40, 5000.0)])
    assert ["new base" in said[0] for _, said in got[1:]] == [False, False, False, True]


def test_a_negative_reading_after_a_reset_exports_the_last_value_with_what_the_reset_moved() -> None:
    book = CounterBook()
    got = feed(book, [(0, 1000.0), (10, 50.0), (11, -1.0)])
    assert [v for v, _ in got] == [1000.0, 1050.0, 1050.0]


def test_an_unchanged_sample_is_passed_as_it_is_and_a_changed_one_keeps_its_name_and_labels() -> None:
    book = CounterBook()
    first = [S("x_joules_total", 100.0, (("source", "ups"),))]
    out, _ = book.judge("c", first, KINDS, MOST, 0.0)
    assert out[0] is first[0]
    out, _ = book.judge("c", [S("x_joules_total", 10.0, (("source", "ups"),))], KINDS, MOST, 10.0)
    assert out == [S("x_joules_total", 110.0, (("source", "ups"),))]


def test_a_guard_takes_zero_and_a_fraction_as_a_first_reading() -> None:
    assert guard().check("k", 0.0, 0.0) is None
    assert guard().check("k", 0.5, 0.0) is None


def test_a_guard_takes_the_same_value_again_and_refuses_a_rise_just_past_its_most() -> None:
    g = guard()
    g.seed("k", 100.0, 1000.0)
    assert g.check("k", 100.0, 1001.0) is None
    assert g.check("k", 100.0 + 5 * 1.0 + 2.0 + 1.0, 1006.0) is not None  # most(5 s) = 7


def test_a_good_reading_clears_what_the_guard_suspected() -> None:
    g = guard()
    g.seed("k", 100.0, 0.0)
    assert g.check("k", 500.0, 1.0) is not None
    assert g.check("k", 101.0, 2.0) is None
    assert g.check("k", 500.0, 3.0) is not None
    assert g.check("k", 500.0, 4.0) is not None  # two in a row since the good one: not yet three


def test_a_guards_suspect_agrees_within_exactly_its_most_since() -> None:
    g = guard()
    g.seed("k", 100.0, 0.0)
    g.check("k", 500.0, 10.0)
    g.check("k", 507.0, 15.0)  # most(5 s) = 7: agrees
    assert g.check("k", 507.0, 16.0) == "rebased"
    g = guard()
    g.seed("k", 100.0, 0.0)
    g.check("k", 500.0, 10.0)
    g.check("k", 508.0, 15.0)  # 8 apart: a new suspect
    assert g.check("k", 508.0, 16.0) != "rebased"


def test_after_a_new_base_the_guard_judges_from_it_and_forgets_its_suspicion(caplog: pytest.LogCaptureFixture) -> None:
    g = guard()
    g.seed("k", 100.0, 0.0)
    for t, v in ((1.0, 500.0), (2.0, 501.0)):
        g.check("k", v, t)
    with caplog.at_level("WARNING", logger="collectors.counters"):
        assert g.check("k", 502.0, 3.0) == "rebased"
    assert caplog.records[0].getMessage() == ("counter k: 3 readings in a row agree on 502 (was 100): taken as its new "
                                              "base, the jump itself booked nowhere")
    fell = g.check("k", 499.0, 4.0)
    assert fell is not None and fell.startswith("k fell from 502 to 499")
    assert g.check("k", 900.0, 5.0) is not None  # an impossible jump from the new base

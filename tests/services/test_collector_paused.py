"""services.common.collector_paused: the cycle collector is off while a large crash's rows are
built, and on again afterwards whatever happens, also when requests of one threaded worker
overlap."""

import gc
import threading

import pytest

from settlements.services.common import collector_paused


@pytest.fixture(autouse=True)
def collector_on():
    gc.enable()
    yield
    gc.enable()


def test_the_collector_is_off_inside_and_on_after():
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_an_error_inside_still_starts_it_again():
    with pytest.raises(ValueError), collector_paused():
        raise ValueError("a refused row")
    assert gc.isenabled()


def test_a_caller_that_found_it_off_leaves_it_off():
    gc.disable()
    with collector_paused():
        pass
    assert not gc.isenabled()


def test_overlapping_callers_leave_it_on_in_every_order():
    first_inside, second_done = threading.Event(), threading.Event()

    def first():
        with collector_paused():
            first_inside.set()
            second_done.wait(5)

    thread = threading.Thread(target=first)
    thread.start()
    first_inside.wait(5)
    with collector_paused():  # found off: the first caller will start it again
        assert not gc.isenabled()
    assert not gc.isenabled()  # the first is still building its rows
    second_done.set()
    thread.join(5)
    assert gc.isenabled()

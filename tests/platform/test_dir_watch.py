"""The run loop's wait (src/retrolink/run/dir_watch.py): woken by a write, not by a clock."""
import threading
import time

from retrolink.run.dir_watch import DirWatch


def _write_later(path, delay_s):
    timer = threading.Timer(delay_s, path.write_text, args=("MARK x\n",))
    timer.start()
    return timer


def test_a_write_in_the_directory_wakes_it_long_before_the_timeout(tmp_path):
    with DirWatch(tmp_path, 0.01) as watch:
        start = time.monotonic()
        writer = _write_later(tmp_path / "node0-output.log", 0.2)
        assert watch.wait(30.0)
        assert time.monotonic() - start < 10.0
        writer.join()


def test_nothing_written_means_it_sleeps_until_the_timeout(tmp_path):
    with DirWatch(tmp_path, 0.01) as watch:
        start = time.monotonic()
        assert not watch.wait(0.3)
        assert time.monotonic() - start >= 0.29


def test_writes_one_after_another_wake_it_no_more_often_than_its_interval(tmp_path):
    log = tmp_path / "node0-console.log"
    with DirWatch(tmp_path, 0.2) as watch:
        log.write_text("a\n")
        assert watch.wait(5.0)
        woken = time.monotonic()
        log.write_text("b\n")
        assert watch.wait(5.0)
        assert time.monotonic() - woken >= 0.19

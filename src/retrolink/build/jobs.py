"""A build step in a thread of its own, beside the others (QEMU's build beside the rest
of the pipeline, QEMU's build Python beside its source download)."""
import threading

from retrolink.progress import stop_tools


class Background:
    """fn(*args, **kwargs) in a thread of its own; result() waits and gives its value
    or raises its exception; stop() ends its tools (progress.stop_tools) and waits."""

    def __init__(self, fn, *args, **kwargs):
        self._value, self._error = None, None

        def run():
            try:
                self._value = fn(*args, **kwargs)
            except BaseException as e:      # raised again by result()
                self._error = e
        self._thread = threading.Thread(target=run, name=getattr(fn, "__name__", "job"),
                                        daemon=True)
        self._thread.rl_parent = threading.current_thread()     # for stop_tools
        self._thread.start()

    def result(self):
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value

    def stop(self) -> None:
        """The foreground failed: end this job's tools, and wait for it to notice (its own
        failure is then of no interest)."""
        stop_tools(self._thread)
        # a tool started just after the first look is ended by the second
        while self._thread.is_alive():
            self._thread.join(0.2)
            stop_tools(self._thread)

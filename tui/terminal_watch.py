"""The workbench leaves when its terminal goes away (a terminal multiplexer's session killed, a
remote login dropped).

Textual's terminal driver, left alone, outlives its terminal: on SIGHUP the process dies without
running its exit handlers, and when SIGHUP does not arrive (ignored, or not forwarded by a parent)
its input thread loops on the hung-up terminal, whose reads return b"" at once, at 100% CPU for
as long as nobody kills it. :class:`WatchedLinuxDriver` ends the app through ``App.exit`` (so
``on_unmount`` and the other exit handlers run) on whichever sign comes first:

- SIGHUP (unless it was ignored when the app started: that is the operator's choice, and the
  other signs still end the app once the terminal is really gone);
- end of input: a read returns b"" or fails with EIO / EBADF (the input thread then stops);
- a watchdog, every second, finding that the input or the screen is no longer on a terminal
  (after a hang-up every terminal call fails), or a write to the screen failing.

Only the real terminal driver is replaced: the web driver of ``prefscope serve`` and the headless
one of tests are left as they are.
"""

from __future__ import annotations

import asyncio
import errno
import os
import selectors
import signal
from codecs import getincrementaldecoder
from typing import IO

from textual._loop import loop_last
from textual._parser import ParseError
from textual._xterm_parser import XTermParser
from textual.driver import Driver
from textual.drivers.linux_driver import LinuxDriver

WATCH_EVERY = 1.0  # seconds between two looks at the terminal (two isatty calls)
_GONE = (errno.EIO, errno.EBADF, errno.ENXIO)  # what a closed or hung-up terminal answers


def watched_driver(driver_class: type[Driver]) -> type[Driver]:
    """The driver to run with: the watched one in place of Textual's terminal driver."""
    return WatchedLinuxDriver if driver_class is LinuxDriver else driver_class


class _ScreenFile:
    """The driver's output file, which reports (instead of raising) a terminal that is gone.

    Textual's writer thread dies on the first failed write, after which its bounded queue fills
    and the next write blocks the event loop for good, so the app could not even exit. A failed
    write also stays in the file's buffer, and Python's last flush at exit would fail on it again
    (exit status 120): the dead terminal's descriptor is pointed at /dev/null instead."""

    def __init__(self, file: IO[str], on_gone) -> None:
        self._file = file
        self._on_gone = on_gone
        self.gone = False

    def _call(self, method, *args) -> None:
        if self.gone:
            return
        try:
            method(*args)
        except (OSError, ValueError):  # ValueError: the file was closed
            self.gone = True
            _point_at_devnull(self._file)
            self._on_gone()

    def write(self, text: str) -> None:
        self._call(self._file.write, text)

    def flush(self) -> None:
        self._call(self._file.flush)

    def fileno(self) -> int:
        return self._file.fileno()


def _point_at_devnull(file: IO[str]) -> None:
    """Let later writes and flushes of ``file`` succeed into nothing (its terminal is gone)."""
    try:
        fd = file.fileno()
        devnull = os.open(os.devnull, os.O_WRONLY)
    except (OSError, ValueError):
        return
    try:
        os.dup2(devnull, fd)
    except OSError:
        pass
    finally:
        os.close(devnull)


class WatchedLinuxDriver(LinuxDriver):
    """Textual's terminal driver, ending the app when its terminal goes away."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._file = _ScreenFile(self._file, self._terminal_gone)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._watchdog: asyncio.TimerHandle | None = None
        # The ones on a terminal at the start (a pipe as input is not watched). Not looked up
        # again on a restart: Textual restarts on SIGCONT, which a hang-up also sends.
        self._watched_fds = tuple(fd for fd in (self.fileno, self._file.fileno()) if os.isatty(fd))
        self._hup_handled = False
        self._leaving = False

    # -- the three signs -----------------------------------------------------------------
    def start_application_mode(self) -> None:
        self._loop = asyncio.get_running_loop()  # first: the input thread may need it at once
        super().start_application_mode()
        self._stop_watching()
        self._watch()
        if signal.getsignal(signal.SIGHUP) is not signal.SIG_IGN:
            try:
                self._loop.add_signal_handler(signal.SIGHUP, self._terminal_gone)
                self._hup_handled = True
            except (RuntimeError, ValueError):  # not the main thread: SIGHUP keeps its default
                pass

    def _watch(self) -> None:
        if any(not os.isatty(fd) for fd in self._watched_fds):
            self._terminal_gone()
        elif self._loop is not None:
            self._watchdog = self._loop.call_later(WATCH_EVERY, self._watch)

    def _stop_watching(self) -> None:
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None

    def stop_application_mode(self) -> None:
        self._stop_watching()
        if self._hup_handled and self._loop is not None:
            self._loop.remove_signal_handler(signal.SIGHUP)
            self._hup_handled = False
        super().stop_application_mode()

    def _terminal_gone(self) -> None:
        """Leave by the app's normal exit path; callable from any thread, more than once."""
        if self._leaving or self._loop is None:
            return
        self._leaving = True
        try:
            self._loop.call_soon_threadsafe(self._app.exit)
        except RuntimeError:  # the loop is closed: the app has already gone
            pass

    # -- the input thread ----------------------------------------------------------------
    def run_input_thread(self) -> None:
        """Textual 8.2.8's input loop, except that the end of input ends the app: Textual's
        keeps selecting a readable fd whose reads return b"", forever."""
        selector = selectors.SelectSelector()
        selector.register(self.fileno, selectors.EVENT_READ)
        parser = XTermParser(self._debug)
        decode = getincrementaldecoder("utf-8")().decode

        def process(ready: list[tuple[selectors.SelectorKey, int]], final: bool = False) -> bool:
            """Feed what is readable to the parser; False at the end of input."""
            for last, (_key, mask) in loop_last(ready):
                if mask & selectors.EVENT_READ:
                    try:
                        data = os.read(self.fileno, 4096)
                    except OSError as error:
                        if error.errno not in _GONE:
                            raise
                        data = b""
                    if not data:
                        return False
                    for event in parser.feed(decode(data, final=final and last)):
                        self.process_message(event)
            for event in parser.tick():
                self.process_message(event)
            return True

        try:
            while not self.exit_event.is_set():
                try:
                    ready = selector.select(0.1)
                except OSError as error:  # the fd was closed under us
                    if error.errno not in _GONE:
                        raise
                    ready = None
                if ready is None or not process(ready):
                    self._terminal_gone()
                    return
            selector.unregister(self.fileno)
            process(selector.select(0.1), final=True)
        finally:
            selector.close()
            try:
                for _event in parser.feed(""):
                    pass
            except (EOFError, ParseError):
                pass

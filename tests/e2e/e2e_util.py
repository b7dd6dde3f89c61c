"""e2e_util.py - what the Python end-to-end tests share (imported from the
test's own folder; not a test itself)."""
import socket
import time


def free_port():
    """A TCP port on 127.0.0.1 nothing listens on now, for an allotd."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_until(limit, pred, step=0.05):
    """Whether pred() turned true within limit seconds (polled every step)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(step)
    return False

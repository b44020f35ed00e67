"""The network guard itself: a non-loopback connect must fail inside tests."""

import socket

import pytest


def test_non_loopback_connection_is_refused():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        with pytest.raises(RuntimeError, match="only loopback"):
            s.connect(("192.0.2.1", 80))  # TEST-NET-1: never routable, never actually tried
    finally:
        s.close()


def test_loopback_connection_is_allowed():
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    client = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        client.connect(server.getsockname())
    finally:
        client.close()
        server.close()

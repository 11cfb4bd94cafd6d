"""sluice: the Python client of the sluice job queue, written from
docs/protocol.md with the standard library only.

    import sluice
    c = sluice.Client("tcp://127.0.0.1:7711")
    c.put("emails", b"welcome 42", key="welcome-42")
    for task in c.take("emails", wait_ms=5000):
        c.ack(task.id, task.lease)

Client (blocking), AsyncClient (asyncio), Worker (handlers by tube), the
dataclasses of types.py and one exception per error code (errors.py).
"""

from .errors import *  # noqa: F401,F403
from .errors import SluiceError, CODES  # noqa: F401
from .types import *  # noqa: F401,F403
from .types import Setting  # noqa: F401
from .transport import DEFAULT_URL  # noqa: F401
from .client import Client  # noqa: F401
from .aio import AsyncClient  # noqa: F401
from .worker import Worker, Fatal  # noqa: F401
from .router import Router, RoutedStats  # noqa: F401
from .move import MoveProgress, MOVE_KEYS_HELD  # noqa: F401
from .move import MOVE_KEYS_PENDING  # noqa: F401
from .codec import parse_duration  # noqa: F401

__version__ = "0.2.0"

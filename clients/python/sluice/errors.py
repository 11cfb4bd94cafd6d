"""The errors of sluice: one exception class per status code of
docs/protocol.md section 6, all subclasses of SluiceError.

An error reply of the server raises the class of its code, with the
server's message (and, for NotLeader, the leader's URL). The client raises
the same classes for what it meets itself: ConnectionLost (no connection,
or one lost with the request's outcome unknown), TimedOut (no reply in
time), Malformed (a reply that does not decode, a peer that does not speak
sluice). `except sluice.StaleLease:` catches exactly one case;
`except sluice.SluiceError:` every one. `code` is the number (the same as
libsluice's SLUICE_E* codes), `name` the stable short name the HTTP API
and `sluice_errname()` use ("stale_lease"), `symbol` the C name
("ESTALE").
"""

__all__ = ["SluiceError", "error_for", "CODES"]

# code: (C symbol, stable short name, class name)
CODES = {
    1: ("ENOTFOUND", "not_found", "NotFound"),
    2: ("ESTALE", "stale_lease", "StaleLease"),
    3: ("ESTATE", "bad_state", "BadState"),
    4: ("EINVAL", "invalid", "Invalid"),
    5: ("ETUBE", "bad_tube", "BadTube"),
    6: ("EKEY", "bad_key", "BadKey"),
    7: ("ETOOBIG", "payload_too_large", "PayloadTooLarge"),
    8: ("EMSGSIZE", "message_too_large", "MessageTooLarge"),
    9: ("EPROTO", "malformed", "Malformed"),
    10: ("ETRUNC", "truncated", "Truncated"),
    11: ("EVERSION", "bad_version", "BadVersion"),
    12: ("EUNKNOWNOP", "unknown_operation", "UnknownOperation"),
    13: ("ENOSPC", "log_full", "LogFull"),
    14: ("ELOG", "log_failed", "LogFailed"),
    15: ("ECORRUPT", "corrupt", "Corrupt"),
    16: ("ETIMEDOUT", "timed_out", "TimedOut"),
    17: ("ENOTLEADER", "not_leader", "NotLeader"),
    18: ("EREPLICA", "too_few_replicas", "TooFewReplicas"),
    19: ("EEPOCH", "stale_epoch", "StaleEpoch"),
    20: ("ECONN", "no_connection", "ConnectionLost"),
    21: ("ENOMEM", "out_of_memory", "OutOfMemory"),
    22: ("ESHUTDOWN", "shutting_down", "ShuttingDown"),
    23: ("EEXIST", "key_exists", "KeyExists"),
    24: ("EPAUSED", "paused", "Paused"),
    25: ("ELIMIT", "limit", "LimitExceeded"),
    26: ("EAUTH", "unauthenticated", "Unauthenticated"),
    27: ("EPERM", "not_allowed", "NotAllowed"),
    28: ("ENOTEMPTY", "not_empty", "NotEmpty"),
    29: ("EGROUP", "bad_group", "BadGroup"),
    30: ("ECANCELED", "cancelled", "Cancelled"),
    31: ("ERESULT", "result_too_large", "ResultTooLarge"),
    32: ("ESCHED", "bad_schedule", "BadSchedule"),
    33: ("EMOVED", "moved", "Moved"),
    34: ("EBATCH", "batch_closed", "BatchClosed"),
    35: ("EMOVING", "moving_in", "MovingIn"),
}


class SluiceError(Exception):
    """An error of sluice. code: the SLUICE_E* number; name: its stable
    short name; message: the detail (the server's text, or what the client
    met); leader: with NotLeader, the leader's client URL ("" when the
    follower knows none)."""

    code = 0
    symbol = "E?"
    name = "unknown"

    def __init__(self, message="", leader="", code=None):
        if code is not None:
            self.code = code
            self.symbol = "E%d" % code
        self.message = message
        self.leader = leader
        text = "%s: %s" % (self.symbol, message) if message else self.symbol
        if leader:
            text += " (leader: %s)" % leader
        super().__init__(text)


_classes = {}
for _code, (_symbol, _name, _cls) in CODES.items():
    _classes[_code] = type(_cls, (SluiceError,), {
        "code": _code, "symbol": _symbol, "name": _name,
        "__doc__": "Status %d, %s (%s)." % (_code, _symbol, _name),
        "__module__": "sluice",
    })
    globals()[_cls] = _classes[_code]
    globals()[_symbol] = _code
    __all__ += [_cls, _symbol]


def error_for(code, message="", leader=""):
    """The exception for a status code (a SluiceError carrying the number
    for a code this client does not know)."""
    cls = _classes.get(code)
    if cls is None:
        return SluiceError(message, leader, code=code)
    return cls(message, leader)

"""What the operations return: dataclasses for the replies of
docs/protocol.md section 4 (tasks, results, statistics, settings, the
cluster view), and the enumerations of its codes (states, orders, roles).

Times are unix milliseconds (int) as on the wire, durations milliseconds
(fields ending in _ms); payloads are bytes, texts str. The fields follow
the protocol's names, so docs/protocol.md documents each of them.
"""

from dataclasses import dataclass, field
from enum import IntEnum, IntFlag
from typing import Dict, List, Optional

__all__ = ["State", "Setting", "Limit", "Limits", "Order", "Role", "MemberRole", "Verb", "Settings",
           "Pending", "Task", "After", "PutResult", "ItemResult", "Counts",
           "Stats", "ErrorGroup", "Dist", "Hour", "History", "Member",
           "GroupLimits", "Cluster", "Switchover", "TaskPage", "Group", "Groups",
           "Schedule", "Outcome", "MapEntry", "MapCluster", "ClusterMap"]


class State(IntEnum):
    """A task's state (0: gone, only in an After)."""
    GONE = 0
    READY = 1
    DELAYED = 2
    TAKEN = 3
    BURIED = 4
    DONE = 5
    WAITING = 6  # put after parents not acked yet

    def __str__(self):
        return self.name.lower()


# list's orders; a node's role in stats; a member's in the cluster view;
# the job op's beanstalk verbs.
Order = IntEnum("Order", {"ATTEMPTS": 1, "OLDEST": 2, "RUN_AT": 3, "ID": 4},
                module=__name__)
Role = IntEnum("Role", {"LEADER": 1, "FOLLOWER": 2}, module=__name__)
MemberRole = IntEnum("MemberRole", {"FOLLOWER": 0, "LEADER": 1,
                                    "CANDIDATE": 2, "FENCED": 3},
                     module=__name__)
Verb = IntEnum("Verb", {"DELETE": 1, "RELEASE": 2, "BURY": 3, "TOUCH": 4,
                        "TAKE": 5}, module=__name__)


class Setting(IntFlag):
    """The bits of a tube's settings (tube_set's set and unset)."""
    TTR = 0x01
    MAX_ATTEMPTS = 0x02
    BACKOFF = 0x04
    KEEP_DONE = 0x08
    LOST_LEASE = 0x10
    DEAD_LETTER = 0x20


class Limit(IntFlag):
    """A tube's flow limits (tube_limit's limits and unset)."""
    RATE = 0x01
    CONCURRENCY = 0x02


@dataclass
class Limits:
    """A tube's flow limits and where they stand (docs/queue.md, "Flow
    limits"): rate tasks per per_ms ms (1000, 60000, 3600000) with a
    bucket of burst, concurrency tasks taken at once; tokens in the
    bucket, tasks taken now, ready tasks a limit holds back now."""
    tube: str
    own: Limit
    rate: int
    per_ms: int
    burst: int
    concurrency: int
    tokens: int
    taken: int
    held: int

    @property
    def rate_text(self):
        """The rate as people write it ("100/s"), or None."""
        if not self.own & Limit.RATE:
            return None
        unit = {1000: "s", 60000: "m", 3600000: "h"}.get(self.per_ms, "?")
        return "%d/%s" % (self.rate, unit)


@dataclass
class GroupLimits:
    """A tube's group limits (docs/queue.md, "Group limits"), and one
    group's: every is the (Limit, rate, per_ms, burst, concurrency) every
    named group gets; own the group's own, limits those in force; held_by
    is "none", "rate", "concurrency" or "paused"."""
    tube: str
    group: str
    every: tuple
    overrides: int
    paused_groups: int
    held_groups: int
    own_settings: bool
    paused: bool
    live: bool
    own: tuple
    limits: tuple
    ready: int
    taken: int
    tokens: int
    held_by: str

    @property
    def concurrency(self):
        """The concurrency in force for the group, or None."""
        return self.limits[4] if self.limits[0] & Limit.CONCURRENCY else None


@dataclass
class Settings:
    """A tube's settings as in force: own lists those the tube sets
    itself (the others are the server's defaults)."""
    tube: str
    own: Setting
    ttr_ms: int
    max_attempts: int
    backoff_base_ms: int
    backoff_cap_ms: int
    keep_done_ms: int
    lost_lease_immediate: bool
    dead_letter: Optional[str]


@dataclass
class Pending:
    """A replacement waiting for a taken task's lease to end."""
    priority: int
    max_attempts: int
    ttr_ms: int
    run_at: int
    period_ms: int
    size: int
    payload: bytes


@dataclass
class Task:
    """A task record (take, peek, list). The lease is the fencing token
    ack, release, fail, touch and bury need."""
    id: int
    lease: int
    state: State
    detached: bool
    priority: int
    attempts: int
    max_attempts: int
    ttr_ms: int
    run_at: int
    period_ms: int
    created_at: int
    updated_at: int
    taken_at: int
    deadline: int
    size: int
    tube: str
    key: Optional[str]
    last_error: Optional[str]
    payload: bytes
    pending: Optional[Pending] = None
    # a done task (state DONE)
    finished_at: int = 0
    kept_until: int = 0
    duration_ms: int = 0
    result: Optional[str] = None
    # put with if_newer: the versions (0 = none)
    version: int = 0
    pending_version: int = 0
    # the session holding a lease that is not detached
    session: int = 0
    peer: Optional[str] = None
    # its fair group (None: the tube's "" group)
    group: Optional[str] = None
    # put after parents: each parent's id -> its ack's result (bytes; None
    # when it has none or was not acked: see parent_outcomes), in a take
    # or a peek; how many are not acked yet; the rule when one fails
    # ("fail", "ignore", "cancel"); the ids of its children (the first
    # 1,000) and how many it has
    parents: Dict[int, Optional[bytes]] = field(default_factory=dict)
    parent_outcomes: Dict[int, str] = field(default_factory=dict)
    parents_pending: int = 0
    on_parent_failure: Optional[str] = None
    children: List[int] = field(default_factory=list)
    children_count: int = 0
    # taken and cancelled (Client.cancel): its lease's end removes it; a
    # Worker sets it when the lease's touch says so
    cancelled: bool = False
    # the cluster it came from, when taken through a Router
    cluster: Optional[str] = None

    def text(self, encoding="utf-8"):
        """The payload as text."""
        return self.payload.decode(encoding)


@dataclass
class After:
    """Where a task is after ack, release, fail, touch, bury, kick_id or
    update. replaced: the lease ended by a pending replacement taking the
    task's place (state is then where the new content waits)."""
    id: int
    state: State
    run_at: int
    deadline: int
    replaced: bool = False


@dataclass
class Outcome:
    """How a task stands (Client.wait). final: it ended; state: "done",
    or how it failed for good ("buried", "dead_lettered", "deleted",
    "cancelled"), or while it runs its state ("ready", "taken", ...).
    result: a done task's (ack's) result; error: a failed one's last
    error; time: unix ms it ended; cancelled: taken and cancelled."""
    id: int
    state: str
    final: bool
    time: int = 0
    tube: Optional[str] = None
    result: Optional[str] = None
    error: Optional[str] = None
    cancelled: bool = False
    # the task's cluster, through a Router
    cluster: Optional[str] = None


@dataclass
class PutResult:
    """A put's result. created: a new task; False with the id of the
    live task that has the key. not_newer: an if_newer put whose version
    was not newer (nothing changed). throttled: a throttle_ms put within
    its key's window (nothing changed; id is the task that opened it). In
    a batch, error is the item's refusal (a SluiceError) and id is 0."""
    id: int
    created: bool
    not_newer: bool = False
    error: Optional[Exception] = None
    throttled: bool = False
    # the cluster it was done on, through a Router
    cluster: Optional[str] = None


@dataclass
class ItemResult:
    """One item of ack_batch or delete_batch: error None when done."""
    id: int
    error: Optional[Exception] = None
    # the cluster it was done on, through a Router
    cluster: Optional[str] = None


@dataclass
class Counts:
    """A tube's counts (or the totals) in stats."""
    ready: int
    delayed: int
    taken: int
    buried: int
    paused_until: int
    oldest_ready_age_ms: int
    counters: Dict[str, int]
    settings: Optional[Settings] = None


@dataclass
class Stats:
    role: Role
    epoch: int
    lsn: int
    durable_lsn: int
    now: int
    leader: Optional[str]
    totals: Counts
    node: Dict[str, int]
    tubes: Dict[str, Counts]


@dataclass
class ErrorGroup:
    """The live tasks of a tube that share a last error."""
    error: str
    count: int
    ids: List[int] = field(default_factory=list)


@dataclass
class Group:
    """A fair group with ready or taken tasks (groups()); group None is
    the tasks put without one."""
    tube: str
    group: Optional[str]
    ready: int
    taken: int
    oldest_ready_ms: int  # 0 when none is ready


@dataclass
class Groups:
    """The first groups of a tube by backlog, and how many there are."""
    groups: List[Group]
    total: int


@dataclass
class Dist:
    count: int
    total_ms: int
    max_ms: int
    p50_ms: int
    p99_ms: int


@dataclass
class Hour:
    start: int
    acks: int
    fails: int
    buries: int
    ttr_expired: int
    work: Dist
    wait: Dist


@dataclass
class History:
    """Events per slot, oldest first; the depths are None from a server
    before them."""
    start: int
    step_ms: int
    puts: List[int]
    takes: List[int]
    acks: List[int]
    fails: List[int]
    buries: List[int]
    ttr_expired: List[int]
    ready: Optional[List[int]] = None
    delayed: Optional[List[int]] = None
    taken: Optional[List[int]] = None
    buried: Optional[List[int]] = None


@dataclass
class Member:
    name: str
    client_url: Optional[str]
    repl_url: Optional[str]
    role: MemberRole
    sync: bool
    lease: bool
    epoch: int
    durable_lsn: int
    lag_records: int
    lease_until: int
    age_ms: int


@dataclass
class Cluster:
    cluster: str
    node: str
    leader: Optional[str]
    ttl_ms: int
    etcd_error: Optional[str]
    members: List[Member]


@dataclass
class Switchover:
    leader: str
    epoch: int


@dataclass
class MapEntry:
    """The tubes whose names start with prefix ("" the default) belong to
    cluster; the draining clusters still hold tasks of them."""
    prefix: str
    cluster: str
    draining: List[str]


@dataclass
class MapCluster:
    """Where a cluster's nodes are: its leader's client URL ("" when none
    is known) and every member's, the leader first."""
    leader: str
    members: List[str]


@dataclass
class ClusterMap:
    """The cluster map (docs/scaling.md) at its etcd revision, as the node
    of cluster `cluster` serves it."""
    revision: int
    cluster: str
    entries: List[MapEntry]
    clusters: Dict[str, MapCluster]

    def owner(self, tube):
        """The entry of the longest prefix that starts tube, or None."""
        best = None
        for e in self.entries:
            if tube.startswith(e.prefix) and (
                    best is None or len(e.prefix) > len(best.prefix)):
                best = e
        return best


@dataclass
class TaskPage:
    """A page of list with its cursor: next is the id to pass as after
    for the next page, None when none follows."""
    tasks: List[Task]
    next: Optional[int]


@dataclass
class Schedule:
    """A schedule (docs/queue.md, "Schedules"): a task with payload into
    tube at each slot of cron in zone tz, keyed NAME@YYYY-MM-DDTHH:MMZ.
    next_at: unix ms of its next slot (0 when paused); last_slot and
    last_id: the last slot that put a task and that task; fired: slots
    that put a task; skipped: slots decided without one. payload is None
    when left out (schedule_list)."""
    name: str
    tube: str
    cron: str
    tz: str
    catch_up: str
    paused: bool
    priority: int
    ttr_ms: int
    max_attempts: int
    created_at: int
    updated_at: int
    next_at: int
    last_slot: int
    last_id: int
    fired: int
    skipped: int
    size: int
    payload: Optional[bytes]
    # the cluster that holds it, through a Router
    cluster: Optional[str] = None

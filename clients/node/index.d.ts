// Types of sluice-client (hand-written; the code is index.js and lib/).
/// <reference types="node" />
import type { ConnectionOptions } from 'tls';

export type State = 'gone' | 'ready' | 'delayed' | 'taken' | 'buried' | 'done' |
  'waiting';
/** what a parent failing for good (buried, dead-lettered, deleted) does to
 * a task that waits for it: buried with "task N failed: ERROR", counted as
 * done, or deleted (its own children following their rules) */
export type ParentRule = 'fail' | 'ignore' | 'cancel';
export type Order = 'attempts' | 'oldest' | 'run_at' | 'id';
export type SettingName = 'ttr' | 'max_attempts' | 'backoff' | 'keep_done' |
  'lost_lease' | 'dead_letter';
export type Payload = Buffer | string;

export interface ClientOptions {
  /** sent first on every connection (servers with --auth) */
  token?: string;
  /** ms a call may take, retries included, plus a take's wait (30000) */
  timeoutMs?: number;
  /** ms to open one connection (2000) */
  connectTimeoutMs?: number;
  /** options of tls.connect for tls+tcp:// URLs (ca, cert, key, ...) */
  tls?: ConnectionOptions;
  /** the largest reply accepted, bytes */
  maxReply?: number;
}

export interface PutOptions {
  priority?: number; delayMs?: number; at?: number; ttrMs?: number;
  maxAttempts?: number; periodMs?: number; key?: string; replace?: boolean;
  version?: number;
  /** its fair group (1-200 bytes of A-Z a-z 0-9 _ . : / -; else BadGroup) */
  group?: string;
  /** with a key: each put replaces the key's waiting task and pushes its
   * run time back this long; the last one runs (1 ms to 30 days) */
  debounceMs?: number;
  /** with a key: a put within this long of the key's last accepted one is
   * ignored (throttled: true, the id of that task) */
  throttleMs?: number;
  /** the tasks it waits for, 1 to 1000: ids (numbers) or keys (strings:
   * live tasks of the same tube); it is 'waiting' until each is acked,
   * and its take carries their results (Task.parents). An unknown one is
   * NotFound, one acked already counts as done, one failed for good
   * applies onParentFailure at once */
  after?: Array<number | string>;
  /** more parents by key */
  afterKeys?: string[];
  /** with after: 'fail' (the default), 'ignore' or 'cancel' */
  onParentFailure?: ParentRule;
  /** the batch it joins (1-200 bytes of A-Z a-z 0-9 _ . : / -); a closed
   * or ended one is BatchClosed */
  batch?: string;
}
export interface PutItem extends PutOptions { tube: string; payload: Payload; }
export interface PutResult {
  id: number; created: boolean; notNewer: boolean;
  /** a throttleMs put within the key's window: ignored, id its task's */
  throttled: boolean;
  error?: SluiceError | null;
}
export interface ItemResult { id: number; error: SluiceError | null; }

export interface Pending {
  priority: number; maxAttempts: number; ttrMs: number; runAt: number;
  periodMs: number; size: number; payload: Buffer;
}
export interface Task {
  id: number; lease: number; state: State; detached: boolean;
  priority: number; attempts: number; maxAttempts: number; ttrMs: number;
  runAt: number; periodMs: number; createdAt: number; updatedAt: number;
  takenAt: number; deadline: number; size: number; tube: string;
  key: string | null; lastError: string | null; payload: Buffer;
  pending: Pending | null;
  /** a done task's */
  finishedAt?: number; keptUntil?: number; durationMs?: number;
  result: string | null;
  version: number; pendingVersion?: number;
  /** the session holding a lease that is not detached */
  session: number; peer: string | null;
  /** its fair group; null: none */
  group: string | null;
  /** the tasks it waits for, in the order put: each one's outcome and,
   * in a take or a peek, its ack's result (null: none, or not acked) */
  parents: Parent[];
  /** its parents not acked yet */
  parentsPending: number;
  /** null: it has no parents */
  onParentFailure: ParentRule | null;
  /** the tasks that wait (or waited) for it: the first 1000 ids, and
   * how many in all */
  children: number[];
  childrenCount: number;
  /** taken and cancelled: its lease's end removes it */
  cancelled: boolean;
}
export interface Parent {
  id: number;
  outcome: 'pending' | 'done' | 'failed';
  result: string | null;
}
/** How a task stands (Client.wait). */
export interface Outcome {
  id: number;
  /** final: 'done', 'buried', 'deleted', 'cancelled' or 'dead_lettered';
   * else its state now ('ready', 'taken', 'waiting', ...) */
  state: State | 'deleted' | 'cancelled' | 'dead_lettered';
  /** it ended (done, or failed for good) */
  final: boolean;
  /** unix ms it ended; 0 while it runs */
  time: number;
  /** its tube; null when no longer known */
  tube: string | null;
  /** done: its ack's result (null: none) */
  result: string | null;
  /** failed for good: its last error */
  error: string | null;
  /** it is taken and cancelled */
  cancelled: boolean;
}
export interface BatchCallback {
  tube: string;
  /** the task it put; 0: none (yet) */
  task: number;
  /** still to put, and put */
  owed: boolean; fired: boolean;
}
/** A batch (docs/queue.md, "Batches"): its tasks by state and end. */
export interface Batch {
  name: string;
  /** tasks put into it */
  total: number;
  /** its live tasks by state, now */
  waiting: number; ready: number; delayed: number; taken: number;
  /** tasks that ended buried (counted so even if kicked) */
  buried: number;
  acked: number;
  /** deleted, cancelled, moved to a dead-letter tube */
  failed: number;
  /** unix ms of its first put; 0: none yet */
  startedAt: number;
  /** unix ms; 0: not ended */
  endedAt: number;
  closed: boolean; ended: boolean;
  /** put when it ends with every task acked; null: none */
  onSuccess: BatchCallback | null;
  /** put when it ends, whatever its tasks' ends; null: none */
  onComplete: BatchCallback | null;
}
/** A callback of batchSet: its tube, or its tube and payload; '' removes
 * it. Its task's payload is a JSON object of the batch's counts, with
 * this payload as its "payload". */
export type Callback = string | { tube: string; payload?: Payload };
export type CatchUp = 'none' | 'one' | 'all';
/** A schedule (docs/queue.md, "Schedules"): a task into tube at each slot
 * of cron in zone tz, keyed NAME@YYYY-MM-DDTHH:MMZ. */
export interface Schedule {
  name: string; tube: string; cron: string;
  /** a zoneinfo name; 'UTC' when set without one */
  tz: string;
  catchUp: CatchUp; paused: boolean; priority: number; ttrMs: number;
  maxAttempts: number; createdAt: number; updatedAt: number;
  /** unix ms of its next slot; 0 when paused */
  nextAt: number;
  /** the last slot that put a task (0: none yet), and that task */
  lastSlot: number; lastId: number;
  /** slots that put a task; slots decided without one */
  fired: number; skipped: number;
  size: number;
  /** null when left out (scheduleList) */
  payload: Buffer | null;
}
/** A fair group with ready or taken tasks; group null: none. */
export interface Group {
  tube: string; group: string | null; ready: number; taken: number;
  /** how long its oldest ready task has waited since due; 0: none ready */
  oldestReadyMs: number;
}
export interface Groups { groups: Group[]; total: number; }
export interface After {
  id: number; state: State; runAt: number; deadline: number; replaced: boolean;
}
export interface Settings {
  tube: string; own: SettingName[]; ttrMs: number; maxAttempts: number;
  backoffBaseMs: number; backoffCapMs: number; keepDoneMs: number;
  lostLeaseImmediate: boolean; deadLetter: string | null;
}
export interface Counts {
  ready: number; delayed: number; taken: number; buried: number;
  pausedUntil: number; oldestReadyAgeMs: number;
  counters: Record<string, number>; settings?: Settings;
}
export interface Stats {
  role: 'leader' | 'follower'; epoch: number; lsn: number;
  durableLsn: number; now: number; leader: string | null; totals: Counts;
  node: Record<string, number>; tubes: Record<string, Counts>;
}
export interface ErrorGroup { error: string; count: number; ids: number[]; }
export interface Dist {
  count: number; totalMs: number; maxMs: number; p50Ms: number; p99Ms: number;
}
export interface Hour {
  start: number; acks: number; fails: number; buries: number;
  ttrExpired: number; work: Dist; wait: Dist;
}
export interface History {
  start: number; stepMs: number; puts: number[]; takes: number[];
  acks: number[]; fails: number[]; buries: number[]; ttrExpired: number[];
  ready?: number[]; delayed?: number[]; taken?: number[]; buried?: number[];
}
export interface Member {
  name: string; clientUrl: string | null; replUrl: string | null;
  role: 'follower' | 'leader' | 'candidate' | 'fenced'; sync: boolean;
  lease: boolean; epoch: number; durableLsn: number; lagRecords: number;
  leaseUntil: number; ageMs: number;
}
export interface Cluster {
  cluster: string; node: string; leader: string | null; ttlMs: number;
  etcdError: string | null; members: Member[];
}
export interface TaskPage { tasks: Task[]; next: number | null; }
/** An entry of the cluster map: the tubes whose names start with prefix
 * ('' the default) belong to cluster; draining clusters still hold tasks
 * of them. */
export interface MapEntry { prefix: string; cluster: string; draining: string[]; }
export interface ClusterMap {
  /** etcd's; 0: the map was never written */
  revision: number;
  /** the answering node's cluster */
  cluster: string;
  /** sorted by prefix */
  entries: MapEntry[];
  /** each cluster the entries name: its leader's client URL and its
   * members' (the leader first) */
  clusters: Record<string, { leader: string | null; members: string[] }>;
}

export class Client {
  /** urls: "tcp://HOST:PORT", several as an array or comma-separated;
   * default $SLUICE_URL, else tcp://127.0.0.1:7711 */
  constructor(urls?: string | string[] | null, options?: ClientOptions);
  readonly url: string;
  /** ends the session: its leases that are not detached end */
  close(): Promise<void>;
  put(tube: string, payload: Payload, options?: PutOptions): Promise<PutResult>;
  putBatch(items: PutItem[]): Promise<PutResult[]>;
  take(tubes: string | string[], options?: { waitMs?: number; max?: number;
    detach?: boolean; strict?: boolean; durable?: boolean }): Promise<Task[]>;
  ack(id: number, lease: number, options?: { toTube?: string;
    result?: string; force?: boolean }): Promise<After>;
  release(id: number, lease: number, options?: { delayMs?: number;
    priority?: number; force?: boolean; front?: boolean }): Promise<After>;
  untake(id: number, lease: number): Promise<After>;
  fail(id: number, lease: number, error?: string, options?: {
    delayMs?: number; fatal?: boolean; force?: boolean }): Promise<After>;
  touch(id: number, lease: number, options?: { force?: boolean }): Promise<After>;
  bury(id: number, lease: number, options?: { error?: string;
    force?: boolean }): Promise<After>;
  ackBatch(pairs: Array<[number, number]>): Promise<ItemResult[]>;
  kick(tube: string, n?: number, options?: { delayed?: boolean }): Promise<number>;
  kickId(id: number): Promise<After>;
  delete(id: number): Promise<void>;
  deleteKey(tube: string, key: string): Promise<number>;
  deleteBatch(ids: number[]): Promise<ItemResult[]>;
  deleteWhere(tube: string, state: State, olderMs: number): Promise<number>;
  flush(tube: string): Promise<number>;
  update(id: number, options: { priority?: number; delayMs?: number;
    at?: number; ttrMs?: number; maxAttempts?: number;
    payload?: Payload }): Promise<After>;
  job(verb: 'delete' | 'release' | 'bury' | 'touch' | 'take', id: number,
    options?: { priority?: number; delayMs?: number }): Promise<Task | null>;
  releaseAll(tube: string): Promise<number>;
  peek(id: number): Promise<Task>;
  peekKey(tube: string, key: string): Promise<Task>;
  peekNext(tube: string, state?: State): Promise<Task>;
  list(tube: string, options?: { state?: State; order?: Order;
    limit?: number; payloads?: boolean; after?: number }): Promise<TaskPage>;
  stats(tube?: string, options?: { settings?: boolean; durations?: boolean;
    top?: number; limit?: number; after?: number }): Promise<Stats>;
  statsHourly(tube?: string): Promise<Hour[]>;
  history(tube?: string, secs?: number): Promise<History>;
  errors(tube: string, options?: { ids?: boolean;
    state?: State | 'all' }): Promise<ErrorGroup[]>;
  /** a tube's fair groups with ready or taken tasks, the largest backlog
   * first: the first `limit` (1..1000, default 100) and the total; tube
   * '' lists the groups of every tube that has fair groups */
  groups(tube: string, options?: { limit?: number }): Promise<Groups>;
  pause(tube: string, durationMs: number, options?: { create?: boolean }): Promise<number>;
  tubeSet(tube: string, options: { ttrMs?: number; maxAttempts?: number;
    backoff?: [number, number]; keepDoneMs?: number;
    lostLeaseImmediate?: boolean; deadLetter?: string;
    unset?: SettingName[] }): Promise<Settings>;
  tubeShow(tube: string): Promise<Settings>;
  tubeDelete(tube: string, options?: { force?: boolean }): Promise<number>;
  snapshot(): Promise<number>;
  promote(): Promise<number>;
  follow(url: string): Promise<void>;
  cluster(): Promise<Cluster>;
  switchover(node: string, timeoutMs?: number): Promise<{ leader: string; epoch: number }>;
  auth(token: string): Promise<void>;
  /** the cluster map this node serves (any node started with --etcd) */
  clusterMap(): Promise<ClusterMap>;
  /** sets prefix ('' the default) to cluster in etcd; the new revision */
  mapSet(prefix: string, cluster: string, draining?: string[]): Promise<number>;
  mapDelete(prefix: string): Promise<number>;
  /** a tube's move, step by step (Router.move runs them; the admin's):
   * hold up to max tasks at a source (each with its state before the
   * hold and the hold's lease) */
  moveHold(tube: string, max: number): Promise<Task[]>;
  /** drop held tasks ([id, lease] pairs): how many went */
  moveDrop(tube: string, pairs: Array<[number, number]>): Promise<number>;
  /** copy held tasks into a target: per task its copy's id or the code
   * that refused it */
  moveIn(tube: string, source: string, tasks: Task[]):
    Promise<Array<{ status: number; id: number }>>;
  /** the move of tube is over here: the source ids forgotten */
  moveEnd(tube: string): Promise<number>;
  /** the reservations of tube's keys at a source (keys of tasks completed
   * there, within their dedup window) of tasks whose ids are above after,
   * lowest first: tasks in state done, runAt the reservation's end */
  moveKeys(tube: string, max: number, after?: number | bigint):
    Promise<Task[]>;
  /** make moveKeys' reservations at a target, each until the same time:
   * per one the id it carries (0: it had expired) or the refusing code */
  moveKeysIn(tube: string, source: string, reservations: Task[]):
    Promise<Array<{ status: number; id: number }>>;
  /** mark a source keep for tube: its drain ends only by the mover's
   * moveEnd there (1: marked now, 0: it was) */
  moveKeep(tube: string): Promise<number>;
  /** the keys of tube's live tasks at a source, ids above after, lowest
   * first: tasks with their id, tube, key and state, no payload */
  moveLive(tube: string, max: number, after?: number | bigint):
    Promise<Task[]>;
  /** hold moveLive's keys at a target as placeholders, each under the id
   * its copy will get (a put of the key answers it) */
  movePlace(tube: string, source: string, tasks: Task[]):
    Promise<Array<{ status: number; id: number }>>;
  /** a target refuses keyed puts of tube with MovingIn until moveReady
   * (1: marked now, 0: it was) */
  movePend(tube: string, source: string): Promise<number>;
  /** the keys of tube from source are held at a target: keyed puts go on
   * (1: the mark went now, 0: there was none) */
  moveReady(tube: string, source: string): Promise<number>;

  /** how task id stands, waiting up to timeoutMs (0..3600000) for it to
   * end; a task that ended before is answered for the server's dedup
   * window (10 minutes by default); NotFound after it, or for an id never
   * put */
  wait(id: number, timeoutMs?: number): Promise<Outcome>;
  /** a waiting, ready, delayed, buried or done task is deleted at once; a
   * taken one when its lease ends (its holder's touch, release, fail and
   * bury are Cancelled; its ack succeeds). NotFound: unknown or ended */
  cancel(id: number): Promise<void>;
  /** many (1..1000), each on its own */
  cancelBatch(ids: number[]): Promise<ItemResult[]>;
  /** sets a batch's callbacks and closes it (close: it takes no more
   * tasks, and ends once none is live); a batch not made yet is made */
  batchSet(name: string, options: { onSuccess?: Callback;
    onComplete?: Callback; close?: boolean }): Promise<Batch>;
  batchClose(name: string): Promise<Batch>;
  /** closes it and cancels each of its live tasks */
  batchCancel(name: string): Promise<Batch>;
  /** NotFound: never made, or forgotten the dedup window after it ended */
  batchShow(name: string): Promise<Batch>;
  /** the open ones first (the latest started first), then the ended
   * ones, at most limit (1..1000, default 100), and how many in all */
  batchList(options?: { limit?: number }): Promise<{ batches: Batch[];
    total: number }>;
  /** the batch task id is in while it is live there; null: none */
  batchOf(id: number): Promise<string | null>;
  /** creates or replaces schedule name (1-64 bytes): cron is 'M H DOM MON
   * DOW' or @yearly, @monthly, @weekly, @daily, @hourly, in zone tz (a
   * zoneinfo name; '' or none: UTC); catchUp 'one' by default. A bad
   * field or zone is BadSchedule, naming it */
  scheduleSet(name: string, tube: string, cron: string, payload?: Payload,
    options?: { tz?: string; catchUp?: CatchUp; priority?: number;
      ttrMs?: number; maxAttempts?: number; paused?: boolean }): Promise<Schedule>;
  /** every schedule, by name, without payloads */
  scheduleList(): Promise<Schedule[]>;
  /** one, with its payload (NotFound) */
  scheduleShow(name: string): Promise<Schedule>;
  schedulePause(name: string): Promise<Schedule>;
  /** the slots of the pause are skipped */
  scheduleResume(name: string): Promise<Schedule>;
  /** the tasks it put stay (NotFound) */
  scheduleDelete(name: string): Promise<void>;
}

/** A task taken through a Router: the cluster it came from */
export interface RoutedTask extends Task { cluster: string; }
export interface RouterOptions extends ClientOptions {
  /** ms the map may age before a call reads it again (1000); 0: only on
   * a Moved error */
  refreshMs?: number;
}
export interface RoutedStats {
  ready: number; delayed: number; taken: number; buried: number;
  /** each cluster's stats; both null: it does not have the tube */
  clusters: Record<string, { stats: Stats | null; error: SluiceError | null }>;
}
/** Requests routed by tube over several clusters sharing one map. */
export class Router {
  /** urls: any node(s) of any cluster (which serves the map) */
  constructor(urls?: string | string[] | null, options?: RouterOptions);
  close(): Promise<void>;
  /** the map, read now (refresh false: only when older than refreshMs) */
  clusterMap(refresh?: boolean): Promise<ClusterMap>;
  mapSet(prefix: string, cluster: string, draining?: string[]): Promise<number>;
  mapDelete(prefix: string): Promise<number>;
  /** the Client of the tube's cluster, for the calls not routed here */
  clientFor(tube: string): Promise<Client>;
  /** the Client of a cluster */
  cluster(name: string): Promise<Client>;
  put(tube: string, payload: Payload, options?: PutOptions):
    Promise<PutResult & { cluster: string }>;
  /** split by cluster, one commit each, not atomic across clusters; a
   * part that failed whole gives its items its error */
  putBatch(items: PutItem[]): Promise<Array<PutResult & { cluster: string }>>;
  /** over tubes of one or several clusters: the first tasks that come,
   * each once */
  take(tubes: string | string[], options?: { waitMs?: number; max?: number;
    detach?: boolean; strict?: boolean; durable?: boolean }): Promise<RoutedTask[]>;
  ack(task: Task, options?: { toTube?: string; result?: string;
    force?: boolean }): Promise<After>;
  release(task: Task, options?: { delayMs?: number; priority?: number;
    force?: boolean; front?: boolean }): Promise<After>;
  fail(task: Task, error?: string, options?: { delayMs?: number;
    fatal?: boolean; force?: boolean }): Promise<After>;
  touch(task: Task, options?: { force?: boolean }): Promise<After>;
  bury(task: Task, options?: { error?: string; force?: boolean }): Promise<After>;
  ackBatch(tasks: Task[]): Promise<Array<ItemResult & { cluster: string | null }>>;
  /** every cluster's stats and their sum */
  stats(tube?: string, options?: { settings?: boolean; durations?: boolean;
    top?: number; limit?: number; after?: number }): Promise<RoutedStats>;
  /** every cluster's members */
  clusters(): Promise<Record<string, { cluster: Cluster | null;
    error: SluiceError | null }>>;
  /** on the task's cluster (a put's result or a task of this Router, or
   * { id, cluster } / { id, tube }: ids are per cluster); a wait that
   * waits goes on a connection of its own */
  wait(task: TaskRef, timeoutMs?: number): Promise<Outcome & { cluster: string }>;
  cancel(task: TaskRef): Promise<void>;
  /** one request per cluster, results in the tasks' order */
  cancelBatch(tasks: TaskRef[]): Promise<Array<ItemResult & { cluster: string }>>;
  batchOf(task: TaskRef): Promise<string | null>;
  /** its parts on every cluster that holds one, summed */
  batchShow(name: string): Promise<RoutedBatch>;
  /** every cluster's (up to limit each), each with its cluster */
  batchList(options?: { limit?: number }): Promise<{
    batches: Array<Batch & { cluster: string }>; total: number }>;
  /** on every cluster holding a part; a batch not made yet: tube's owner
   * (else its callback tube's) */
  batchSet(name: string, options: { onSuccess?: Callback;
    onComplete?: Callback; close?: boolean; tube?: string }): Promise<RoutedBatch>;
  batchClose(name: string, options?: { tube?: string }): Promise<RoutedBatch>;
  batchCancel(name: string, options?: { tube?: string }): Promise<RoutedBatch>;
  /** on the owner of tube; the name deleted on the other clusters */
  scheduleSet(name: string, tube: string, cron: string, payload?: Payload,
    options?: { tz?: string; catchUp?: 'none' | 'one' | 'all';
      priority?: number; ttrMs?: number; maxAttempts?: number;
      paused?: boolean }): Promise<Schedule & { cluster: string }>;
  /** every cluster's, each with its cluster, by name */
  scheduleList(): Promise<Array<Schedule & { cluster: string }>>;
  scheduleShow(name: string): Promise<Schedule & { cluster: string }>;
  schedulePause(name: string): Promise<Schedule & { cluster: string }>;
  scheduleResume(name: string): Promise<Schedule & { cluster: string }>;
  scheduleDelete(name: string): Promise<void>;
  /** moves tube (and the tubes its entry governs) to cluster target, as
   * `sluice tube move`; run again, it resumes an interrupted move */
  move(tube: string, target: string, options?: MoveOptions): Promise<MoveProgress>;
}
/** Where a task is: ids are per cluster */
export type TaskRef = { id: number; cluster?: string | null; tube?: string };
/** A batch over the clusters holding its parts: counts summed */
export interface RoutedBatch extends Batch {
  /** the one part's cluster; null: several */
  cluster: string | null;
  parts: Record<string, Batch>;
}
export interface MoveOptions {
  /** tasks per round, 1-1000 (500) */
  batch?: number;
  /** how long a node may stay unreachable (60000) */
  timeoutMs?: number;
  /** how long to wait for the source's taken tasks; 0: as long as it takes */
  waitMs?: number;
  /** after each round and at each stage of the key window (awaited
   * when it answers a promise) */
  report?: (progress: MoveProgress) => void | Promise<void>;
}
export interface MoveProgress {
  tube: string; source: string; target: string;
  /** tasks copied (made, or folded into a task of their key) */
  copied: number;
  /** removed at their source after the copy */
  dropped: number;
  batches: number;
  /** rounds that found only taken tasks at the source (or a workflow of
   * the tube under way there) */
  waits: number;
  /** the map's after the last change */
  revision: number;
  /** the map names the target alone */
  done: boolean;
  /** key reservations the target holds for the sources' (keys of tasks
   * completed there, within their dedup window), as of the last pass */
  keys: number;
  /** groups whose own settings were copied */
  groups: number;
  /** the key window: MOVE_KEYS_PENDING after the map change until the
   * source's live keys are held at the target (a keyed put there is sent
   * again meanwhile), MOVE_KEYS_HELD once they are, just before the
   * target takes keyed puts; 0 otherwise */
  stage: number;
}
export const MOVE_KEYS_PENDING: 1;
export const MOVE_KEYS_HELD: 2;

export interface WorkerOptions extends ClientOptions {
  concurrency?: number; waitMs?: number; graceMs?: number; detach?: boolean;
  /** stop once that many tasks were taken and handled */
  maxTasks?: number;
  /** stop once no task came for that many ms */
  idleMs?: number;
  /** the urls are nodes of clusters sharing a cluster map: each loop is a
   * Router (takes from every cluster, lease calls where a task came from) */
  routed?: boolean;
  /** routed: as RouterOptions' */
  refreshMs?: number;
}
export class Worker {
  constructor(urls?: string | string[] | null, options?: WorkerOptions);
  /** handler's value acks the task as its result (over 65535 bytes: a
   * Fatal); signal aborts, with a Cancelled as its reason, once a touch
   * finds the task cancelled (the touches run every third of its ttr) */
  task(tube: string, handler: (task: Task, context: { signal: AbortSignal })
    => unknown | Promise<unknown>): this;
  run(options?: { signals?: boolean }): Promise<void>;
  stop(): void;
  readonly processed: number;
  readonly failed: number;
  /** tasks whose handler was stopped by a cancel */
  readonly cancelled: number;
}
/** thrown by a handler: the task is buried at once */
export class Fatal extends Error {}

export class SluiceError extends Error {
  /** libsluice's number */
  readonly code: number;
  /** "ESTALE" */
  readonly symbol: string;
  /** "stale_lease", as the HTTP API says it */
  readonly errname: string;
  /** the server's text */
  readonly detail: string;
  /** NotLeader: the leader's client URL */
  readonly leader: string;
  /** Moved: the cluster that owns the tube, the map's revision as the
   * refusing node knows it, its members' client URLs (the leader first) */
  readonly cluster?: string;
  readonly revision?: number;
  readonly urls?: string[];
}
export class NotFound extends SluiceError {}
export class StaleLease extends SluiceError {}
export class BadState extends SluiceError {}
export class Invalid extends SluiceError {}
export class BadTube extends SluiceError {}
export class BadKey extends SluiceError {}
export class PayloadTooLarge extends SluiceError {}
export class MessageTooLarge extends SluiceError {}
export class Malformed extends SluiceError {}
export class Truncated extends SluiceError {}
export class BadVersion extends SluiceError {}
export class UnknownOperation extends SluiceError {}
export class LogFull extends SluiceError {}
export class LogFailed extends SluiceError {}
export class Corrupt extends SluiceError {}
export class TimedOut extends SluiceError {}
export class NotLeader extends SluiceError {}
export class TooFewReplicas extends SluiceError {}
export class StaleEpoch extends SluiceError {}
export class ConnectionLost extends SluiceError {}
export class OutOfMemory extends SluiceError {}
export class ShuttingDown extends SluiceError {}
export class KeyExists extends SluiceError {}
export class Paused extends SluiceError {}
export class LimitExceeded extends SluiceError {}
export class Unauthenticated extends SluiceError {}
export class NotAllowed extends SluiceError {}
export class NotEmpty extends SluiceError {}
export class BadGroup extends SluiceError {}
export class Cancelled extends SluiceError {}
export class ResultTooLarge extends SluiceError {}
export class BadSchedule extends SluiceError {}
export class Moved extends SluiceError {}
export class BatchClosed extends SluiceError {}
/** a keyed put at the target of a tube's move before the source's keys
 * are there: nothing was done; put and putBatch send it again by
 * themselves until the timeout */
export class MovingIn extends SluiceError {}
export function errorFor(code: number, message?: string, leader?: string): SluiceError;
export const version: string;

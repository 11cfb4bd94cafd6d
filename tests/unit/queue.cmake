# The in-memory queue: transitions and errors, the record codec, and a
# random model test with replay checks.
# test_queue is split by subject, each part its own test (t_queue_ops.h
# has the requests they share): put, take and leases; fails, keys,
# replace, delete, flush, pause; the queries, apply's checks and the
# hourly statistics; snapshots.
sluice_test(queue LIBS sluice_queue TIMEOUT 120)
sluice_test(queue_ends LIBS sluice_queue TIMEOUT 120)
sluice_test(queue_query LIBS sluice_queue TIMEOUT 120)
sluice_test(queue_snap LIBS sluice_queue TIMEOUT 120)
# test_queue_snap counts allocations (a snapshot write must make none),
# and fails each in turn: task slabs (mmap) and sanitized tasks
# (aligned_alloc) too.
target_link_options(test_queue_snap PRIVATE
	-Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=aligned_alloc,--wrap=mmap)
sluice_test(qrec LIBS sluice_queue TIMEOUT 60)
sluice_test(qputs LIBS sluice_queue TIMEOUT 60)
sluice_test(model LIBS sluice_queue TIMEOUT 300)
# The same for workflows: dependencies, results, cancelling, batches,
# schedules, restarts from the log and from a snapshot.
sluice_test(model_flow LIBS sluice_queue TIMEOUT 300)
# Both share the log's checks (unit/t_model.c) and the helpers of
# unit/t_model.h.
foreach(t model model_flow)
	target_sources(test_${t} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/unit/t_model.c)
endforeach()
# test_model's model, its requests and its comparisons, by subject
# (t_model_queue.h).
target_sources(test_model PRIVATE
	${CMAKE_CURRENT_SOURCE_DIR}/unit/t_model_queue.c
	${CMAKE_CURRENT_SOURCE_DIR}/unit/t_model_queue_ops.c
	${CMAKE_CURRENT_SOURCE_DIR}/unit/t_model_queue_tube.c
	${CMAKE_CURRENT_SOURCE_DIR}/unit/t_model_queue_cmp.c)
# test_model_flow's likewise (t_model_flow.h).
target_sources(test_model_flow PRIVATE
	${CMAKE_CURRENT_SOURCE_DIR}/unit/t_model_flow.c
	${CMAKE_CURRENT_SOURCE_DIR}/unit/t_model_flow_ops.c
	${CMAKE_CURRENT_SOURCE_DIR}/unit/t_model_flow_sched.c
	${CMAKE_CURRENT_SOURCE_DIR}/unit/t_model_flow_cmp.c)
sluice_test(queue_mem LIBS sluice_queue TIMEOUT 120)
# The task slabs: objects keep their bytes, are reused, and a large pool
# (with a spare faulted in ahead) gives its memory back.
sluice_test(tslab LIBS sluice_queue TIMEOUT 60)
sluice_test(idx LIBS sluice_queue TIMEOUT 60)
# The tasks by id in chunks of consecutive ids (src/queue/tidx.c).
sluice_test(tidx LIBS sluice_queue TIMEOUT 120)
# The rolling per-second history (queue/rates.h).
sluice_test(rates LIBS sluice_queue TIMEOUT 60)
# A tube's flow limits: the token bucket and the concurrency cap.
sluice_test(flow LIBS sluice_queue TIMEOUT 60)
# The deduplication modes of a keyed put: debounce and throttle.
sluice_test(dedupmode LIBS sluice_queue TIMEOUT 60)
# A tube's fair groups: the rotation, their lifetime and memory, the
# PUT_G record, replay and snapshots.
sluice_test(group LIBS sluice_queue TIMEOUT 120)
# The groups listing by backlog and each group's taken count.
sluice_test(group_list LIBS sluice_queue TIMEOUT 60)
# Limits per fair group: caps, rates, overrides, pauses, their records.
sluice_test(glimit LIBS sluice_queue TIMEOUT 60)
# Schedules: their records, a slot fired once, replay and snapshots.
sluice_test(sched LIBS sluice_queue TIMEOUT 60)
# The outcomes of finished tasks (wait) and cancelling.
sluice_test(outcome LIBS sluice_queue TIMEOUT 60)
# Dependencies between tasks: waiting, results, the parent-failure
# rules, PUT_X and ACK_R, replay and snapshots, memory per edge.
sluice_test(deps LIBS sluice_queue TIMEOUT 120)
# The graph's shape: parents in any order, a node's first child kept in
# it and its list grown past it, live and through a snapshot.
sluice_test(deps_order LIBS sluice_queue TIMEOUT 60)
# Batches: counts by state, the end rule, callbacks fired once, the
# BATCH_* records, replay and snapshots.
sluice_test(qbatch LIBS sluice_queue TIMEOUT 120)
# A tube moved between clusters: held, dropped, copied in (move.h).
sluice_test(qmove LIBS sluice_queue TIMEOUT 60)
# A snapshot's tasks back in their heaps: a loaded queue takes, wakes,
# expires and kicks in the order of the queue it was written from.
sluice_test(qload LIBS sluice_queue TIMEOUT 120)

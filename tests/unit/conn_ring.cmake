# The faces' sends in one io_uring_enter (src/server/face/conn_ring.c).
sluice_test(conn_ring LIBS sluice_server TIMEOUT 30)

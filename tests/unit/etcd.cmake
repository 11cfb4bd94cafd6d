# The etcd client of automatic failover, against a real etcd (skipped when
# etcd is not installed; make test installs etcd-server) and a fake one.
sluice_test(etcd LIBS sluice_server TIMEOUT 180)

#!/bin/bash
# One H200 under MPS (run as the device command, not through call.sh): the e2e on 2 x 1, 169ba65's build ("new")
# against call t's (0d006b5, "base") alternately, twice, each run's graph and eager times; then without MPS the e2e
# on 2 x 2 and the transport's collectives on the new build. Its output is v/output.txt in runs.tar.xz.
# Pack: dist/peerlink.xz, dist/mpi (libpeerlink_mpi.so, mpi_comm_nodes_e2e, mpi_net_e2e) and
# dist/build-0d006b5/mpi_comm_nodes_e2e, stripped, xz.
scripts/device/unpack-dist.sh
cp dist/mpi/mpi_comm_nodes_e2e /tmp/new_e2e
scripts/device/with-mps.sh bash -c 'for i in 1 2; do for b in new base; do if [ $b = new ]; then cp /tmp/new_e2e dist/mpi/mpi_comm_nodes_e2e; else cp dist/build-0d006b5/mpi_comm_nodes_e2e dist/mpi/mpi_comm_nodes_e2e; fi; r=$(OUT=/tmp/e2e-$b-$i COMM_PER_NODE=1 timeout 80 scripts/device/run-nodes.sh comm 2>&1 | grep -o "ok 233 calls\|13 calls across nodes from a CUDA graph [0-9.]* us a run, eagerly [0-9.]* us" | sort -u | tr "\n" " "); echo "$b $i: $r"; done; done'
cp /tmp/new_e2e dist/mpi/mpi_comm_nodes_e2e
echo "2x2 ok ranks: $(OUT=/tmp/comm22 timeout 150 scripts/device/run-nodes.sh comm 2>&1 | grep -c '^ok 233 calls')"
echo "net ok ranks: $(OUT=/tmp/net22 timeout 60 scripts/device/run-nodes.sh net 2>&1 | grep -c '^ok 108 hierarchical')"

#!/bin/bash
# Call g without MPS (as call d ran): the communicator across 2 virtual nodes x 2 on the one GPU (every collective
# and send/recv of the API against the closed forms) and a rank killed there, with the copies out in stream order.
# Under MPS (call g) the two ranks of a node, both on the GPU, deadlocked in their kernels' barriers -- with MPS the
# processes' grids share the SMs at once and need not all be resident, where time-slicing gives each context the
# whole GPU -- and the kill run after it found the device unavailable.
# Pack: as call g.
scripts/device/call.sh i 'run nodes-comm 150 scripts/device/run-nodes.sh comm' 'run nodes-kill 90 scripts/device/run-nodes.sh kill'

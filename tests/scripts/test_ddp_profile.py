#!/usr/bin/env python3
"""scripts/device/ddp_profile.py's analysis over chrome-trace events written here (the shape torch.profiler
exports: CPU annotations, kernels and copies with their stream). Run by ctest (cpu.scripts.DdpProfile)."""
import os
import sys
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "scripts", "device"))
import ddp_profile  # noqa: E402


def step(ts, dur):
    return {"ph": "X", "cat": "user_annotation", "name": "ddp_step", "ts": ts, "dur": dur}


def op(name, ts, dur, stream, cat="kernel"):
    return {"ph": "X", "cat": cat, "name": name, "ts": ts, "dur": dur, "args": {"stream": stream}}


class UnionTest(unittest.TestCase):
    def test_overlapping_nested_and_apart(self):
        self.assertEqual(ddp_profile.union_length([(0, 10), (5, 15), (20, 30), (22, 25)]), 25)
        self.assertEqual(ddp_profile.union_length([]), 0)
        self.assertEqual(ddp_profile.intersection_length([(0, 10)], [(5, 20)]), 5)
        self.assertEqual(ddp_profile.intersection_length([(0, 10)], [(10, 20)]), 0)


class AnalyseTest(unittest.TestCase):
    def test_spans_of_each_step(self):
        # Stream 7 computes (most kernels); 20 communicates: an all-reduce overlapping the backward by 30 us, then
        # 20 us alone (the next step 40), while the compute stream waits; a copy on a third stream counts as
        # communication too.
        events = [
            step(1000, 500),
            op("fwd", 1010, 100, 7), op("bwd", 1110, 150, 7),
            op("allreduce", 1230, 50, 20), op("copy", 1280, 10, 21, cat="gpu_memcpy"),
            op("opt", 1300, 40, 7),
            step(2000, 500),
            op("fwd", 2010, 100, 7), op("bwd", 2110, 150, 7),
            op("allreduce", 2230, 70, 20),
            op("opt", 2310, 40, 7),
            op("outside", 3000, 5, 20),  # in no step
        ]
        result = ddp_profile.analyse(events)
        first, second = result["steps"]
        self.assertEqual(first["gpu_us"], 330)
        self.assertEqual(first["compute_busy_us"], 290)
        self.assertEqual(first["compute_idle_us"], 40)
        self.assertEqual(first["comm_busy_us"], 60)
        self.assertEqual(first["comm_alone_us"], 30)
        self.assertEqual(first["comm_ops"], 2)
        self.assertEqual(second["comm_alone_us"], 40)
        self.assertEqual(result["median"]["comm_alone_us"], 35)
        self.assertEqual(result["comm_ops"], {"allreduce": 60.0, "copy": 5.0})
        self.assertEqual(ddp_profile.analyse(events, timeline_steps=1)["timeline"], [
            [1, "compute", 7, 0, 100, "fwd", None], [1, "compute", 7, 100, 150, "bwd", None],
            [1, "comm", 20, 220, 70, "allreduce", None], [1, "compute", 7, 300, 40, "opt", None]])
        self.assertEqual(len(result["timeline"]), 9, "both steps' operations, the one outside none")

    def test_the_compute_stream_has_the_most_kernels_not_the_most_time(self):
        # A communication kernel launched early waits for its peer through three compute kernels.
        events = [step(0, 1000), op("wait_and_reduce", 10, 500, 20),
                  op("k1", 20, 50, 7), op("k2", 80, 50, 7), op("k3", 140, 50, 7)]
        result = ddp_profile.analyse(events)
        self.assertEqual(result["comm_ops"], {"wait_and_reduce": 500.0})
        self.assertEqual(result["steps"][0]["compute_busy_us"], 150)

    def test_launch_leads_and_collective_calls(self):
        # Three compute kernels launched by runtime calls ending at 15, 30 and 140: the first two waited 5 and 40 us
        # in the stream, the third started 1 us after its launch (the host paced it). The kernel without a launch
        # call counts in no lead. The host spent 12 + 8 us in two collective calls in the step, 30 in one outside.
        def launch(ts, dur, correlation):
            return {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": ts, "dur": dur,
                    "args": {"correlation": correlation}}

        def kernel(name, ts, dur, correlation=None):
            event = op(name, ts, dur, 7)
            if correlation is not None:
                event["args"]["correlation"] = correlation
            return event

        events = [step(0, 500), launch(10, 5, 1), launch(25, 5, 2), launch(130, 10, 3),
                  kernel("a", 20, 50, 1), kernel("b", 70, 70, 2), kernel("c", 141, 9, 3), kernel("d", 150, 9),
                  {"ph": "X", "cat": "user_annotation", "name": "nccl:all_reduce", "ts": 40, "dur": 12},
                  {"ph": "X", "cat": "user_annotation", "name": "nccl:all_reduce", "ts": 60, "dur": 8},
                  {"ph": "X", "cat": "user_annotation", "name": "nccl:all_reduce", "ts": 600, "dur": 30}]
        result = ddp_profile.analyse(events)
        self.assertEqual(result["steps"][0]["launch_lead_us"], 5)
        self.assertEqual(result["steps"][0]["collective_calls_us"], 20)
        self.assertEqual([row[6] for row in result["timeline"]], [5, 40, 1, None])

    def test_runtime_calls_and_stream_waits_per_step(self):
        # Two steps: three runtime calls and two waits of stream 20 on 7 in the first, one call and one wait of 21
        # on 20 in the second; one call outside both.
        def call(name, ts):
            return {"ph": "X", "cat": "cuda_runtime", "name": name, "ts": ts, "dur": 1, "args": {"correlation": ts}}

        def wait(ts, stream, on):
            return {"ph": "X", "cat": "cuda_sync", "name": "Stream Wait Event", "ts": ts, "dur": 0,
                    "args": {"stream": stream, "wait_on_stream": on, "cuda_event_id": ts}}

        events = [step(0, 100), op("k", 10, 5, 7), call("cudaLaunchKernel", 5), call("cudaStreamWaitEvent", 6),
                  call("cudaStreamWaitEvent", 7), wait(20, 20, 7), wait(30, 20, 7),
                  step(200, 100), op("k", 210, 5, 7), call("cudaGraphLaunch", 205), wait(220, 21, 20),
                  call("cudaLaunchKernel", 500)]
        result = ddp_profile.analyse(events)
        self.assertEqual(result["runtime_calls"],
                         {"cudaGraphLaunch": 0.5, "cudaLaunchKernel": 0.5, "cudaStreamWaitEvent": 1.0})
        self.assertEqual(result["sync_ops"], {"Stream Wait Event on stream 20, wait_on_stream 7": 1.0,
                                              "Stream Wait Event on stream 21, wait_on_stream 20": 0.5})

    def test_backward_gaps_from_the_first_given_kernel_on(self):
        # Step 1: compute kernels of 2 us at 0, 3, 7, 12 (gaps 1, 2, 3) and a comm kernel of 10 us; step 2: one
        # compute kernel, so no gap.
        timeline = [[1, "compute", 7, 0, 2, "a", None], [1, "compute", 7, 3, 2, "b", None],
                    [1, "compute", 7, 12, 2, "d", None], [1, "compute", 7, 7, 2, "c", None],
                    [1, "comm", 20, 4, 10, "r", None], [2, "compute", 7, 0, 2, "a", None]]
        self.assertEqual(ddp_profile.backward_gaps(timeline, first=0), [(1, 2.0, 10), (2, None, 0)])
        self.assertEqual(ddp_profile.backward_gaps(timeline, first=1), [(1, 2.5, 10), (2, None, 0)])

    def test_no_steps_or_no_kernels(self):
        self.assertEqual(ddp_profile.analyse([op("k", 0, 1, 7)])["steps"], [])
        self.assertEqual(ddp_profile.analyse([step(0, 10)])["steps"], [])


if __name__ == "__main__":
    unittest.main()

#!/bin/sh
# The rescue scenario's job on warden (a command job): logs its start for
# bench/rescue.py, then runs 60 s. BENCH_WORKER and BENCH_RESCUE_LOG come
# from the worker's environment.
echo "start $(date +%s%6N) $BENCH_WORKER $WARDEN_JOB_ID" >>"$BENCH_RESCUE_LOG"
exec sleep "${BENCH_JOB_SECONDS:-60}"

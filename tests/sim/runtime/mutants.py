#!/usr/bin/env python3
"""Writes a copy of one of warden's source files broken on purpose.

    mutants.py NAME SOURCE OUT

Each mutant breaks one rule of the protocol in src/ (the runtime, the
maintenance pass, the in-memory store or the SQLite store's SQL) the way the model's mutations
broke it in tests/sim; the runtime simulation's seeds must catch it
(tests/sim/CMakeLists.txt). The build fails when a break no longer applies
to the file as it is: a mutant must never pass because it changed nothing.
"""
import sys

MUTANTS = {
    # A job claimed before a freeze starts after it, its lease gone.
    "start_gate": (
        "if (!LeaseProven(r)) return NotStarted(r);",
        "/* mutant: no start gate */",
    ),
    # A job's process starts without the deadline its worker handed over:
    # a worker frozen between its start check and the exec lets the job
    # start after its lease passed (the model's start_needs_worker).
    "start_deadline_dropped": (
        "spec.start_by_mono_ms = LeaseProvenUntil(r);",
        "/* mutant: no start deadline for the job's process */",
    ),
    # The watchdog stops a job only when its lease has run out, when the
    # store may already have given it to another worker.
    "fence_at_full_lease": (
        "ShouldSelfFence(now, base, r->lease, opt_.heartbeat)",
        "Millis(now - base) >= r->lease",
    ),
    # A write about a job lands whatever lease token it names.
    "complete_unfenced": (
        "if (job.lease_token != ref.lease_token || job.state != JobState::kRunning) return nullptr;",
        "if (job.state != JobState::kRunning) return nullptr;",
    ),
    # A checkpoint lands whatever lease token it names: a stale attempt's
    # late save overwrites a newer attempt's.
    "checkpoint_unfenced": (
        "JobRow* job = FindRunningLocked(ref);\n  if (!job) return false;",
        "JobRow* job = &db_->t.jobs.at(ref.id);",
    ),
    # A claim ignores the concurrency keys of running jobs.
    "no_concurrency_check": (
        "if (running_keys.count(job.concurrency_key)) continue;",
        "/* mutant: keys of running jobs not checked */",
    ),
    # A lost at-most-once job is retried like an at-least-once one.
    "rescue_amo_retryable": (
        "in.delivery = job->delivery;",
        "in.delivery = Delivery::kAtLeastOnce;",
    ),
    # A heartbeat renews every running job's lease, not only its worker's.
    "heartbeat_foreign": (
        "if (job.state != JobState::kRunning || job.worker_id != id) continue;",
        "if (job.state != JobState::kRunning) continue;",
    ),
    # No death is proven (by pid or lost session): a killed worker's jobs
    # wait for their leases, past the promised recovery bound.
    "no_death_proofs": (
        "WARDEN_ASSIGN_OR_RETURN(pass.proven, DeclareProvenDead(store_, env_, pass.live));",
        "/* mutant: no proofs of death */",
    ),
    # The sightings of a pass's worker list dated from before the read: a
    # slow read backdates the renewals it returns, and a verdict comes
    # early (found by the model, fixed in src/).
    "pass_start_sightings": (
        "WARDEN_ASSIGN_OR_RETURN(pass.live, store_.WorkerListLive(\"\"));\n"
        "    judge_.BeginPass(clock_.MonotonicMs());",
        "WARDEN_ASSIGN_OR_RETURN(pass.live, store_.WorkerListLive(\"\"));",
    ),
    # Silence judged by the wall clock (the sweeper's against the store's
    # timestamps) instead of by watching: a step takes live workers' jobs.
    "rescue_by_wall_clock": (
        "const auto silent_leases = SilentLeases(judge, leases, unchanged);",
        "(void)&SilentLeases;\n"
        "  std::vector<LeaseRow> silent_leases;\n"
        "  for (const LeaseRow& l : leases) {\n"
        "    if (l.expires_at <= clock.NowMs()) silent_leases.push_back(l);\n"
        "  }",
    ),
    "presume_by_wall_clock": (
        "const auto silent_workers = SilentWorkers(judge, live, options.keepalive_threshold);",
        "std::vector<WorkerLiveness> silent_workers;\n"
        "  for (const WorkerLiveness& w : live) {\n"
        "    if (clock.NowMs() - w.last_heartbeat >= options.keepalive_threshold.count()) {\n"
        "      silent_workers.push_back(w);\n"
        "    }\n"
        "  }",
    ),
    # The same breaks in SQL, run on the SQLite seeds
    # (WARDEN_RUNTIME_SIM_STORE=sqlite): a completion with a result lands
    # whatever lease token it names.
    "complete_unfenced_sqlite": (
        '"lease_expires_at = NULL WHERE id = ? AND lease_token = ? AND "',
        '"lease_expires_at = NULL WHERE id = ? AND (lease_token = ? OR 1) AND "',
    ),
    # A checkpoint lands whatever lease token it names.
    "checkpoint_unfenced_sqlite": (
        '"UPDATE jobs SET checkpoint = ? WHERE id = ? AND lease_token = ? "',
        '"UPDATE jobs SET checkpoint = ? WHERE id = ? AND (lease_token = ? OR 1) "',
    ),
    # A heartbeat renews every running job's lease, not only its worker's.
    "heartbeat_foreign_sqlite": (
        """"WHERE worker_id = ? AND state = 'running' "\n""",
        """"WHERE (worker_id = ? OR 1) AND state = 'running' "\n""",
    ),
}


def main():
    name, source, out = sys.argv[1:4]
    old, new = MUTANTS[name]
    text = open(source).read()
    if text.count(old) != 1:
        sys.exit(f"mutant {name}: the break no longer applies to {source} "
                 f"(its text is there {text.count(old)} times, not once)")
    open(out, "w").write(text.replace(old, new))


if __name__ == "__main__":
    main()

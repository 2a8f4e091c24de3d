"""Check `skillctl stats --prometheus` output with Prometheus's own parser.

Usage: python3 promcheck.py FILE [KEY=N...]

  calls.OUTCOME=N   skillbroker_calls_total{outcome="OUTCOME"} is N; every
                    outcome not named must be 0
  decision=N        the count of that latency histogram is N (also
  worker_start=N    worker_start, call)
  in_flight=N       the gauge is N (also queued)

Whatever the keys, it checks that every family is there with its type,
that the calls counter names ok and every error type, that each histogram
has the broker's buckets in seconds, cumulative, with +Inf equal to
_count, and that the call histogram counts every call reply.

Prints one line per problem and exits 1 if there is any; exits 3 when
prometheus_client (Debian's python3-prometheus-client) cannot be imported.
"""
import math
import sys

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:
    print("prometheus_client is not importable")
    sys.exit(3)

FAMILIES = {
    # the parser drops a counter's _total from its family name
    "skillbroker_uptime_seconds": "gauge",
    "skillbroker_clients": "gauge",
    "skillbroker_requests": "counter",
    "skillbroker_invokes": "counter",
    "skillbroker_calls": "counter",
    "skillbroker_in_flight": "gauge",
    "skillbroker_queued": "gauge",
    "skillbroker_approvals_pending": "gauge",
    "skillbroker_audit_queue": "gauge",
    "skillbroker_decision_seconds": "histogram",
    "skillbroker_worker_start_seconds": "histogram",
    "skillbroker_call_seconds": "histogram",
}
OUTCOMES = {
    "ok", "bad_request", "unknown_skill", "skill_not_enabled",
    "unknown_command", "phase_violation", "permission_denied",
    "approval_denied", "approval_timeout", "rate_limited", "timeout",
    "resource_limit", "sandbox_failed", "audit_unavailable",
    "policy_unavailable", "cancelled", "overloaded", "internal",
    "unsupported", "not_found",
}
BOUNDS_S = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5,
            10, 20, 60, math.inf]

problems = []


def problem(msg):
    problems.append(msg)


def histogram(fam):
    """(count, sum, [(le, cumulative count)]) of a histogram family."""
    count = total = None
    buckets = []
    for s in fam.samples:
        if s.name.endswith("_bucket"):
            buckets.append((float(s.labels["le"]), s.value))
        elif s.name.endswith("_count"):
            count = s.value
        elif s.name.endswith("_sum"):
            total = s.value
    return count, total, buckets


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        text = f.read()
    want = dict(arg.split("=", 1) for arg in sys.argv[2:])
    try:
        fams = {f.name: f for f in text_string_to_metric_families(text)}
    except ValueError as e:
        problem(f"the parser refused the text: {e}")
        return
    for name, typ in FAMILIES.items():
        if name not in fams:
            problem(f"no family {name}")
        elif fams[name].type != typ:
            problem(f"{name} is a {fams[name].type}, not a {typ}")
    for name in sorted(set(fams) - set(FAMILIES)):
        problem(f"a family nobody documented: {name}")
    if problems:
        return
    calls = {s.labels.get("outcome"): s.value
             for s in fams["skillbroker_calls"].samples}
    if set(calls) != OUTCOMES:
        problem(f"calls_total outcomes {sorted(calls)}")
    for outcome, n in calls.items():
        expect = float(want.get(f"calls.{outcome}", 0))
        if n != expect:
            problem(f'calls_total{{outcome="{outcome}"}} {n}, not {expect}')
    for span in ("decision", "worker_start", "call"):
        name = f"skillbroker_{span}_seconds"
        count, total, buckets = histogram(fams[name])
        if [le for le, _ in buckets] != BOUNDS_S:
            problem(f"{name}: buckets {[le for le, _ in buckets]}")
        if any(b[1] > a[1] for b, a in zip(buckets, buckets[1:])):
            problem(f"{name}: buckets not cumulative: {buckets}")
        if not buckets or buckets[-1][1] != count:
            problem(f"{name}: +Inf bucket is not _count ({count})")
        if total is None or total < 0:
            problem(f"{name}: _sum {total}")
        if span in want and count != float(want[span]):
            problem(f"{name}_count {count}, not {want[span]}")
        if span == "call" and count != sum(calls.values()):
            problem(f"{name}_count {count}, calls {sum(calls.values())}")
    for gauge in ("in_flight", "queued"):
        value = fams[f"skillbroker_{gauge}"].samples[0].value
        if gauge in want and value != float(want[gauge]):
            problem(f"skillbroker_{gauge} {value}, not {want[gauge]}")


main()
for p in problems:
    print(p)
sys.exit(1 if problems else 0)

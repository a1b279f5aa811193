"""Measuring helpers shared by every study: serverStatus counter deltas, plans, percentiles, timers."""
from costlab.measure.counters import counter_delta, get_path, snapshot
from costlab.measure.explain import plan_summary
from costlab.measure.stats import summarize

__all__ = ["snapshot", "counter_delta", "get_path", "plan_summary", "summarize"]

"""The arraygrowth study's workload names, declared once. Light (no imports): the config check reads them
before any job, and the engine lab, the server workloads and the schema's enum (a test) follow them."""

PUBLISHED_WORKLOADS = ("insert", "push")   # the article's two workloads
# costlab's own fallback sweep, beyond the article (arraygrowth.fallback.variants)
FALLBACK_VARIANTS = ("push_one", "small_docs", "push_many", "big_elements", "push_slice", "set_array")

# Study appversions: the 14 application versions of "The Cost of Not Knowing MongoDB".
# events -> model (no server) -> per version: load, collStats, correctness, load test -> tables -> figures.
AV = config["appversions"]

# --- events and model ---


rule appversions_events:
    output:
        events="results/appversions/events.parquet",
    params:
        events_per_year=AV["events_per_year"],
        seed=AV["seed"],
    log:
        "results/logs/appversions_events.log",
    script:
        "../scripts/appversions_events.py"


rule appversions_model:
    input:
        events="results/appversions/events.parquet",
        published="resources/published/appversions_collection_stats.csv",
    output:
        stats="results/appversions/model/stats.csv",
        vs_published="results/appversions/model/vs_published.csv",
    params:
        versions=AV["versions"],
        tolerance=AV["model_tolerance"],
    log:
        "results/logs/appversions_model.log",
    script:
        "../scripts/appversions_model.py"


add_targets("appversions", "results/appversions/model/stats.csv", "results/appversions/model/vs_published.csv")

# --- load, stats, load test, figures ---

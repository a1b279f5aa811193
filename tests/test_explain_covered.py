"""Deciding "covered" from explain output shaped like mongod's, including plans with no FETCH stage
that still read documents.

Shapes:
- EXPRESS_IXSCAN / EXPRESS_CLUSTERED_IXSCAN (MongoDB 8.0): mongodb/mongo
  src/mongo/db/query/plan_explainer_express.cpp (winningPlan {isCached, stage, keyPattern,
  indexName[, projection, projectionCovered]}) and src/mongo/db/exec/express/express_plan.h
  (the iterators fetch the record: numDocumentsFetched 1 for one match).
- IDHACK (MongoDB before 8.0): a single-stage winning plan; an _id lookup examines 1 key, 1 document.
- PROJECTION_COVERED over IXSCAN: the classic covered plan, totalDocsExamined 0.
"""
from costlab.measure import plan_summary
from costlab.server import resolve_backend


def explain(winning_plan: dict, keys: int, docs: int, returned: int) -> dict:
    return {
        "queryPlanner": {"namespace": "t.c", "winningPlan": winning_plan, "rejectedPlans": []},
        "executionStats": {"executionSuccess": True, "nReturned": returned, "executionTimeMillis": 0,
                           "totalKeysExamined": keys, "totalDocsExamined": docs,
                           "executionStages": dict(winning_plan, nReturned=returned, docsExamined=docs)},
    }


EXPRESS_IXSCAN = explain({"isCached": False, "stage": "EXPRESS_IXSCAN", "keyPattern": "{ a: 1 }",
                          "indexName": "a_1"}, keys=1, docs=1, returned=1)
EXPRESS_CLUSTERED = explain(
    {"isCached": False, "stage": "EXPRESS_CLUSTERED_IXSCAN"}, keys=0, docs=1, returned=1
)
IDHACK = explain({"stage": "IDHACK"}, keys=1, docs=1, returned=1)


def test_express_and_idhack_plans_read_documents_so_they_are_not_covered():
    for plan in (EXPRESS_IXSCAN, EXPRESS_CLUSTERED, IDHACK):
        summary = plan_summary(plan)
        assert "FETCH" not in summary["stages"]
        assert summary["covered"] is False, summary["plan"]


def test_projection_covered_or_index_only_with_zero_documents_is_covered():
    classic = explain({"stage": "PROJECTION_COVERED", "transformBy": {"_id": 0, "a": 1},
                       "inputStage": {"stage": "IXSCAN", "keyPattern": {"a": 1}, "indexName": "a_1"}},
                      keys=5, docs=0, returned=5)
    assert plan_summary(classic)["covered"] is True
    # A newer express plan that says so itself (plan_explainer_express.cpp: projectionCovered).
    express = explain(
        {
            "isCached": False,
            "stage": "EXPRESS_IXSCAN",
            "keyPattern": "{ a: 1 }",
            "indexName": "a_1",
            "projection": {"_id": 0, "a": 1},
            "projectionCovered": True,
        },
        keys=1,
        docs=0,
        returned=1,
    )
    assert plan_summary(express)["covered"] is True
    # A count answered by COUNT_SCAN reads no documents.
    assert plan_summary(explain({"stage": "COUNT", "inputStage": {"stage": "COUNT_SCAN"}},
                                keys=3, docs=0, returned=0))["covered"] is True


def test_zero_documents_examined_by_a_fetching_plan_is_not_covered():
    # Nothing matched: FETCH examined no document, but the plan would have read them.
    nothing = explain({"stage": "FETCH", "inputStage": {"stage": "IXSCAN", "indexName": "a_1"}},
                      keys=0, docs=0, returned=0)
    assert plan_summary(nothing)["covered"] is False
    missing_id = explain(
        {"isCached": False, "stage": "EXPRESS_IXSCAN", "indexName": "_id_"}, keys=0, docs=0, returned=0
    )
    assert plan_summary(missing_id)["covered"] is False


class _FakeEngineClient:
    """Test double of docker.DockerClient: only what backend resolution and the setup step touch."""

    def __init__(self, **_kwargs):
        self.closed = False

    def ping(self):
        return True

    def close(self):
        self.closed = True


def test_backend_resolution_closes_the_docker_client_it_opened(monkeypatch):
    # Resolution happens when the workflow is planned (costlab.server.availability): it pings the
    # engine through docker.from_env and must close that client, or every snakemake call leaks one.
    import docker

    opened = []

    def fake_from_env(**kwargs):
        opened.append(_FakeEngineClient(**kwargs))
        return opened[-1]

    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    monkeypatch.setattr(docker, "from_env", fake_from_env)
    assert resolve_backend({"backend": "auto"}) == "docker"
    assert len(opened) == 1 and opened[0].closed


def test_server_setup_step_closes_the_docker_client_it_opened(monkeypatch):
    from costlab.server import docker_backend, setup

    opened = []

    def fake_engine_client(timeout_s=5):
        opened.append(_FakeEngineClient())
        return opened[-1]

    def fake_record(engine, image, log=None, pull="missing"):
        assert engine is opened[-1] and not engine.closed
        return {"image": image}

    monkeypatch.setattr(docker_backend, "engine_client", fake_engine_client)
    monkeypatch.setattr(setup, "docker_record", fake_record)
    record = setup.setup_record({"backend": "docker", "image": "mongo:8.0"}, "docker", "standalone")
    assert record["server"] == {"image": "mongo:8.0"}
    assert len(opened) == 1 and opened[0].closed

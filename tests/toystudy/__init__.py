"""A toy study kept outside costlab/ (tests/test_registry.py adds it with COSTLAB_STUDY_PACKAGES=toystudy):
what a new study declares, and nothing else; its rules are rules.smk beside this file."""
from dataclasses import dataclass
from pathlib import Path

from costlab.study import RuleAsk, Study
from costlab.targets import Targets, measured, server_free


@dataclass(frozen=True)
class ToyNames:
    model: str      # server-free: the model's verdicts
    measured: str   # needs a server


NAMES = ToyNames("results/toystudy/model/published_vs_model.csv", "results/toystudy/tables/measured.csv")

STUDY = Study(
    name="toystudy",
    title="Toy study",
    source='"A toy article"',
    measured="One number the toy article published, checked by a server-free model; nothing else.",
    rules_file=str(Path(__file__).with_name("rules.smk")),
    data_keys=("value",),
    measuring_rules={"toystudy_measure": RuleAsk(work_s=lambda config: 1.0, jobs=lambda config: 1)},
    targets_from=lambda config: Targets((server_free(NAMES.model), measured(NAMES.measured)), names=NAMES),
    config_schema={
        "type": "object",
        "default": {},
        "additionalProperties": False,
        "properties": {"value": {"type": "number", "default": 2.0}},
    },
)

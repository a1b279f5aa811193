"""A toy study kept outside costlab/ (tests/test_registry.py adds it with COSTLAB_STUDY_PACKAGES=toystudy):
what a new study declares, and nothing else; its rules are rules.smk beside this file."""
from pathlib import Path

from costlab.study import RuleAsk, Study

STUDY = Study(
    name="toystudy",
    title="Toy study",
    source='"A toy article"',
    measured="One number the toy article published, checked by a server-free model; nothing else.",
    rules_file=str(Path(__file__).with_name("rules.smk")),
    data_keys=("value",),
    measuring_rules={"toystudy_measure": RuleAsk(work_s=lambda config: 1.0, jobs=lambda config: 1)},
    config_schema={
        "type": "object",
        "default": {},
        "additionalProperties": False,
        "properties": {"value": {"type": "number", "default": 2.0}},
    },
)

# The toy study's rules (tests/toystudy): a server-free model check, and a measurement that needs a server.
TOY = PLAN.names("toystudy")   # its two files (tests/toystudy/__init__.py: Study.targets)


rule toystudy_model:
    output:
        TOY.model,
    params:
        value=config["toystudy"]["value"],
    run:
        published = 2.0
        verdict = "reproduced" if params.value == published else "not reproduced"
        Path(output[0]).parent.mkdir(parents=True, exist_ok=True)
        Path(output[0]).write_text(
            "finding,metric,unit,published,reproduced,ratio,tolerance,verdict,server_kind\n"
            f"the toy number is two,value,count,{published},{params.value},{params.value / published},"
            f"equal,{verdict},model\n"
        )


rule toystudy_measure:
    input:
        server=server_json("standalone"),
    output:
        TOY.measured,
    resources:
        mongod=MONGOD,
        **ask("toystudy_measure").resources,
    run:
        Path(output[0]).write_text("value\n1\n")


# Files of yours (a layout, a sample, an element) as inputs by their content: rules/common.smk by_content.


rule user_file_digest:
    """The stamp of one content of a file of yours: its name is the content's SHA-256 (nothing else in it)."""
    output:
        "results/.inputs/{digest}.sha256",
    wildcard_constraints:
        digest="[0-9a-f]{64}",
    localrule: True
    log:
        "results/logs/user_file_digest_{digest}.log",
    conda:
        CONDA_ENV
    shell:
        "echo {wildcards.digest} > {output} 2> {log}"

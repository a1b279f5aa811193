# The report: rules are added by its own issue.

# Study docsize: rules are added by its own issue.

# Study flatnested: rules are added by its own issue.

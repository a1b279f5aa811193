# Study uniqueidx: rules are added by its own issue.

# Study arraygrowth: rules are added by its own issue.

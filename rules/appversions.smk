# Study appversions: rules are added by its own issue.

"""Several hosts for the tests: scorch runs, sshd, network namespaces, the two-host config."""

"""sclang: the interpreter process, its stdin protocol, sessions, results, scorch's classes."""

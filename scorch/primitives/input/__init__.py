"""What comes from outside, checked before it is parsed so that none can stall or exhaust
scorch: a person's regular expressions (RE2, linear time) and TOML files' size and depth."""

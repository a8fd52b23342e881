"""The OS: processes and their console, jackd, ports, the audio driver, systemd, timing."""

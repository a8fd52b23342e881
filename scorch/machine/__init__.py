"""What this machine has and lacks for an installation: the doctor's checks and their fixes."""

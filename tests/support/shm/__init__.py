"""What the suite leaves in /dev/shm: the session's watcher, and what killed tests free."""

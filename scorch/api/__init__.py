"""The operations every front end calls, and the services that run them here or elsewhere."""

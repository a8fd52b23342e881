"""The actors: each room, the router, the supervisor and its watchdog, the keeper, JACK."""

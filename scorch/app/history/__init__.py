"""The run's history in the state folder and what ``scorch report`` makes of it.

``store`` keeps events and samples in sqlite (bounded), ``summary`` turns them into each
room's figures (pure), ``recorder`` copies the rooms' events into the store while scorch runs.
"""

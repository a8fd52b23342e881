"""Notes as data: capture, compact text, Standard MIDI Files and a playing partner.

Pure: no threads, sockets or processes. The router, the rooms and the API feed
these modules and read them; nothing here knows who they are.
"""

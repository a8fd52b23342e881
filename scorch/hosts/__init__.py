"""Other hosts of the installation: links to them, their rooms, and what crosses the link."""

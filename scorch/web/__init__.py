"""The technician's page: ``scorch run`` serves it when ``[web] listen`` is set (docs/web.md)."""

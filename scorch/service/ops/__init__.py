"""The operations, grouped by what they act on; importing a module registers its operations.

Each operation is a plain function over the :class:`~scorch.service.orchestra.Orchestra`
facade, decorated with :func:`scorch.service.api.operation`: the function's
argument model, result model and docstring are the whole definition.
"""

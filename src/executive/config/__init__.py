"""How settings are read and checked; what they are is :mod:`executive.settings`.

``settings.py`` declares the variables (a few groups apart, in ``sections``); the ``Settings``
class's other bases here carry the rest, one concept each. None of them imports any layer of
the daemon: settings know no hooks, loop or memory.
"""

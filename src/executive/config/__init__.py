"""How settings are read and checked; what they are is :mod:`executive.settings`.

``settings.py`` holds the ``Settings`` class's field list, the one place a variable is
declared. Its bases here carry the rest, one concept each: true/false flags and whether memory
is on (``flags``), the rules a value must keep (``rules``), values derived from the fields
(``derived``) and where values come from, the env file and the errors (``sources``). None of
them imports any layer of the daemon: settings know no hooks, loop or memory.
"""

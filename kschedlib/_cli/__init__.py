"""What every ``kschedlib`` command shares: the output formats (:mod:`.formats`) and the common
options with their help (:mod:`.options`).

Both are light on purpose: ``kschedlib --help`` and each command import them, and nothing of the
scheduler until a command runs.  Each command's own module (``simulation/command.py``,
``capacity/_cli.py``, ``sweeps/command.py``, ``extender/command.py``) adds its arguments and runs it.
"""

"""What every ``kschedlib`` command shares: the output formats (:mod:`.formats`), the common
options (:mod:`.options`) and the help's layout, examples and exit statuses (:mod:`.help`).

Both are light on purpose: ``kschedlib --help`` and each command import them, and nothing of the
scheduler until a command runs.  Each command's own module (``simulation/command.py``,
``capacity/_cli.py``, ``sweeps/command.py``, ``extender/command.py``) adds its arguments and runs it.
"""

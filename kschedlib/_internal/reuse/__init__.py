"""The reuse layer: results that did not change are reused, never recomputed differently.

Memo tables and columns of node-local Filter verdicts and Score results, and the fast-path
runners built on them; :class:`~kschedlib._internal.runtime.ProfileRuntime` asks it for filter
runners and local score views and keeps only the extension points' semantics.
"""

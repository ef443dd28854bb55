"""The exceptions kschedlib raises.

Every exception derives from :class:`KschedError` and also from the builtin it
semantically is, so callers can catch what they expect::

    KschedError
    ├── ManifestError (ValueError)        a Kubernetes object could not be read
    │   ├── QuantityError                 a resource quantity is malformed
    │   └── ModelError (TypeError)        a model object was built with a wrong type or value
    ├── SelectorError (ValueError)        a label or node selector is malformed
    ├── CelError (ValueError)             a DRA device selector (CEL) failed
    │   ├── CelCompileError               it does not compile
    │   └── CelRuntimeError               it failed while evaluating one device
    ├── ConfigError (ValueError)          a scheduler configuration or plugin args are invalid
    ├── RegistryError (KeyError)          a plugin name is unknown or registered twice
    ├── CacheError (RuntimeError)         an operation contradicts the cache's state
    ├── ExtenderError (RuntimeError)      a scheduler extender failed or answered wrongly
    ├── WireError (ValueError)            an extender protocol message could not be decoded
    ├── BadRequestError (ValueError)      the extender service cannot act on a request
    ├── ScenarioError (RuntimeError)      a scenario of a sweep ended in an error
    ├── ReportError (ValueError)          a document is not a kschedlib result an HTML report can show
    ├── KubeApiError (RuntimeError)       a Kubernetes API server refused a request (kschedlib.kube)
    ├── LoopNotRunning (RuntimeError)     a live scheduler's loop takes no calls (kschedlib.kube)
    └── ExtraNotInstalledError (ImportError)  an optional dependency (an extra) is not installed

"Does not fit" is never an exception: it is a :class:`~kschedlib.framework.Status`.
"""

from __future__ import annotations

from typing import final

__all__ = [
    "BadRequestError",
    "CacheError",
    "CelCompileError",
    "CelError",
    "CelRuntimeError",
    "ConfigError",
    "ExtenderError",
    "ExtraNotInstalledError",
    "KschedError",
    "KubeApiError",
    "LoopNotRunning",
    "ManifestError",
    "ModelError",
    "QuantityError",
    "RegistryError",
    "ReportError",
    "ScenarioError",
    "SelectorError",
    "WireError",
    "install_hint",
]


class KschedError(Exception):
    """Root of every exception raised by kschedlib."""


class ManifestError(KschedError, ValueError):
    """A Kubernetes object (a dict from JSON or YAML) could not be read.

    ``obj`` names the object (``Pod default/web-1``), ``field`` the path of the
    offending field (``spec.containers[0].resources.requests.cpu``) and
    ``value`` the bad value.
    """

    def __init__(self, message: str, *, obj: str = "", field: str = "", value: object = None) -> None:
        self.obj = obj
        self.field = field
        self.value = value
        self.message = message
        where = ", ".join(part for part in (obj, f"field {field}" if field else "") if part)
        text = f"{where}: {message}" if where else message
        if value is not None:
            text += f" (got {value!r})"
        super().__init__(text)


@final
class QuantityError(ManifestError):
    """A resource quantity such as ``"100m"`` or ``"1Gi"`` is malformed."""


@final
class ModelError(ManifestError, TypeError):
    """A model object (``Pod``, ``Node``, ``Container``, ...) was given a field of the wrong type or value.

    Raised by the constructors, before anything is built, so a refused object never reaches the
    scheduler.  ``obj``, ``field`` and ``value`` as for :class:`ManifestError`; the value is shown
    even when it is ``None``.
    """

    def __init__(self, message: str, *, obj: str = "", field: str = "", value: object = None) -> None:
        super().__init__(message, obj=obj, field=field, value=value)
        if value is None:
            self.args = (f"{self.args[0]} (got None)",)


@final
class SelectorError(KschedError, ValueError):
    """A label selector or node selector requirement is malformed."""


class CelError(KschedError, ValueError):
    """A CEL device selector of a DeviceClass or ResourceClaim failed; ``message`` is kube's text.

    ``expression`` is the selector's source. The message is the one kube-scheduler v1.36 wraps into
    its allocator errors (``class gpu: selector #0: CEL runtime error: no such key: model``).
    """

    def __init__(self, message: str, *, expression: str = "") -> None:
        self.message = message
        self.expression = expression
        super().__init__(message)


@final
class CelCompileError(CelError):
    """A selector does not parse or type-check (``compilation failed: ERROR: <input>:1:5: ...``)."""


@final
class CelRuntimeError(CelError):
    """A selector failed on one device (``no such key: model``, ``no such overload``, cost limit)."""


class _FieldError(KschedError, ValueError):
    """An error about one field of a document: ``field: message (got value)``."""

    def __init__(self, message: str, *, field: str = "", value: object = None) -> None:
        self.field = field
        self.value = value
        self.message = message
        text = f"{field}: {message}" if field else message
        if value is not None:
            text += f" (got {value!r})"
        super().__init__(text)


@final
class ConfigError(_FieldError):
    """A KubeSchedulerConfiguration, profile or plugin argument is invalid.

    ``field`` is the path of the offending field (``profiles[0].plugins.score.enabled[1].weight``).
    """


@final
class RegistryError(KschedError, KeyError):
    """A plugin name is unknown to the registry, or registered twice."""

    def __str__(self) -> str:  # KeyError quotes its argument; keep the message readable
        return str(self.args[0]) if self.args else ""


@final
class CacheError(KschedError, RuntimeError):
    """An operation contradicts the scheduler cache's state (e.g. forgetting a pod never assumed)."""


class ExtenderError(KschedError, RuntimeError):
    """An extender failed: transport error, non-200 reply, malformed reply, or an ``Error`` it returned."""


class WireError(KschedError, ValueError):
    """A protocol message could not be decoded."""


class BadRequestError(KschedError, ValueError):
    """A request the extender service cannot act on (answered with ``status``, 400 by default)."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@final
class ScenarioError(KschedError, RuntimeError):
    """A scenario of a sweep ended in an error (raised by ``SweepResult.unwrap``)."""


def install_hint(extra: str) -> str:
    """The command that installs ``extra``: from the package index, and from this source checkout when
    kschedlib runs from one (an editable install, where the first command would fetch another copy)."""
    from pathlib import Path  # here: only a missing extra needs it

    checkout = Path(__file__).resolve().parent.parent
    command = f"pip install 'kschedlib[{extra}]'"
    if (checkout / "pyproject.toml").is_file() and (checkout / "kschedlib").is_dir():
        command += f" (from this checkout: pip install -e '.[{extra}]' in {checkout})"
    return command


@final
class ReportError(_FieldError):
    """A document given to :func:`kschedlib.report.render_html` is not a kschedlib result it can show.

    ``field`` names where it differs (``<top level>``, a missing key) and ``value`` what was found.
    """


@final
class ExtraNotInstalledError(KschedError, ImportError):
    """A feature needs an optional dependency that is not installed; the message names the extra."""

    def __init__(self, feature: str, extra: str, module: str) -> None:
        self.extra = extra
        super().__init__(f"{feature} needs the '{module}' package: {install_hint(extra)}", name=module)


@final
class KubeApiError(KschedError, RuntimeError):
    """The API server refused a request (``status`` is its HTTP status; 0 when it could not be reached)."""

    def __init__(self, status: int, reason: str, message: str, *, method: str = "", path: str = "",
                 retry_after: float | None = None) -> None:
        self.status = status
        self.reason = reason
        self.message = message
        self.method = method
        self.path = path
        self.retry_after = retry_after
        super().__init__(f"{method} {path}: {status} {reason}: {message}" if method else message)


@final
class LoopNotRunning(KschedError, RuntimeError):
    """A live scheduler's loop takes no calls: it is still reading the cluster, or it stopped (``kschedlib.kube``)."""

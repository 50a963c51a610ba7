"""The one home of deprecated names: renamed keywords and renamed functions (issue 40).

An old name works for one release and warns (:class:`DeprecationWarning` naming the new name); it is
removed in the next minor version. ``python -W error::DeprecationWarning`` turns every use into an
error, which is how the book checks that it uses the new names only.

Example
-------
>>> import warnings
>>> @renamed_keywords(n_boot="n_resamples")
... def draws(*, n_resamples: int = 10) -> int:
...     return n_resamples
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     draws(n_boot=3), str(caught[0].message)
(3, 'draws(): keyword n_boot is deprecated since posteval 0.3.0 and will be removed in 0.4.0; use n_resamples')
>>> old = deprecated_alias(draws, "old_draws")
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     old(), str(caught[0].message)
(10, 'old_draws is deprecated since posteval 0.3.0 and will be removed in 0.4.0; use draws')
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

SINCE = "0.3.0"
REMOVED_IN = "0.4.0"


def _message(old: str, new: str) -> str:
    return f"{old} is deprecated since posteval {SINCE} and will be removed in {REMOVED_IN}; use {new}"


def renamed_keywords(**old_to_new: str) -> Callable[[F], F]:
    """Decorator: the keyword ``old`` of the wrapped function is accepted as ``new``, with a
    :class:`DeprecationWarning`; giving both raises :class:`TypeError`. The wrapper keeps the new
    signature (``inspect.signature``) and lists the old names in ``__deprecated_keywords__``."""

    def decorate(func: F) -> F:
        params = inspect.signature(func).parameters
        for old, new in old_to_new.items():
            if new not in params or old in params:
                raise TypeError(f"renamed_keywords: {func.__qualname__} has no parameter {new!r} or still has {old!r}")

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            for old, new in old_to_new.items():
                if old in kwargs:
                    if new in kwargs:
                        raise TypeError(f"{func.__name__}() got both {old!r} (deprecated) and {new!r}; pass {new!r} only")
                    warnings.warn(f"{func.__name__}(): keyword {_message(old, new)}", DeprecationWarning, stacklevel=2)
                    kwargs[new] = kwargs.pop(old)
            return func(*args, **kwargs)

        wrapper.__deprecated_keywords__ = dict(getattr(func, "__deprecated_keywords__", {}), **old_to_new)
        return wrapper  # type: ignore[return-value]

    return decorate


def deprecated_alias(new: F, old: str) -> F:
    """The function ``new`` under its former name ``old``: the same call, with a :class:`DeprecationWarning`
    naming ``new``. ``__deprecated_alias_of__`` is ``new``."""

    @functools.wraps(new)
    def alias(*args, **kwargs):
        warnings.warn(_message(old, new.__name__), DeprecationWarning, stacklevel=2)
        return new(*args, **kwargs)

    alias.__name__ = alias.__qualname__ = old
    alias.__doc__ = f"Deprecated alias of :func:`{new.__module__}.{new.__name__}` (removed in {REMOVED_IN})."
    alias.__deprecated_alias_of__ = new
    return alias  # type: ignore[return-value]


def deprecated_attribute(new: str, old: str) -> property:
    """A read-only property ``old`` of a result class that returns the field ``new`` with a
    :class:`DeprecationWarning` (a renamed field of a result dataclass)."""

    def get(self):
        warnings.warn(_message(f"{type(self).__name__}.{old}", f"{type(self).__name__}.{new}"), DeprecationWarning,
                      stacklevel=2)
        return getattr(self, new)

    return property(get, doc=f"Deprecated: use ``{new}`` (removed in {REMOVED_IN}).")

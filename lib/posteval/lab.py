"""JupyterLab for the book's readers: chapters open as notebooks with their numbers in the prose.

``make lab`` starts JupyterLab with ``jupyter-config/`` on the config path, which sets
:class:`BookContentsManager` as the contents manager. It is jupytext's contents manager (the
``.md`` chapters open as notebooks, paired with their reference ``.ipynb``) plus one thing:
jupyterlab-myst renders MyST but not myst-nb's ``{glue:text}`` role, so on opening a chapter each
``{glue:text}`key:fmt``` in the prose is shown as the value glued under ``key`` in the notebook's
stored outputs (the reference run), written as the role ``{abbr}`value (glue key:fmt)```, which
jupyterlab-myst renders as the number with the key on hover. Saving turns every such role
back into ``{glue:text}`key:fmt```, so the ``.md`` source never holds a number.
"""

from __future__ import annotations

import ast
import re

GLUE_ROLE = re.compile(r"\{glue:text\}`([^`\s]+)`")
SHOWN_ROLE = re.compile(r"\{abbr\}`[^`]*? \(glue ([^`\s()]+)\)`")
RECORD_MIME = "application/papermill.record/text/plain"


def _cells(nb):
    return nb["cells"] if isinstance(nb, dict) else nb.cells


def glued_values(nb) -> dict[str, str]:
    """{key: text/plain of the glued value} from the stored outputs of a notebook (myst-nb glue)."""
    values = {}
    for cell in _cells(nb):
        for out in cell.get("outputs", []) or []:
            name = (out.get("metadata") or {}).get("scrapbook", {}).get("name")
            text = (out.get("data") or {}).get(RECORD_MIME)
            if name and text is not None:
                values[name] = "".join(text) if isinstance(text, list) else text
    return values


def format_glued(text: str, fmt: str) -> str:
    """A glued text/plain value formatted as myst-nb's ``{glue:text}`key:fmt``` would show it."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text
    if not fmt:
        return str(value)
    try:
        return format(value, fmt)
    except (ValueError, TypeError):
        return str(value)


def show_glue_values(nb) -> int:
    """Replace each ``{glue:text}`` role in the markdown cells by its value; returns how many."""
    values = glued_values(nb)
    count = 0

    def shown(match):
        nonlocal count
        spec = match.group(1)
        key, _, fmt = spec.partition(":")
        if key not in values:
            return match.group(0)
        text = format_glued(values[key], fmt)
        if "`" in text or "\n" in text:
            return match.group(0)
        count += 1
        return f"{{abbr}}`{text} (glue {spec})`"

    for cell in _cells(nb):
        if cell.get("cell_type") == "markdown":
            source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
            cell["source"] = GLUE_ROLE.sub(shown, source)
    return count


def restore_glue_roles(nb) -> None:
    """Turn every shown value back into its ``{glue:text}`` role (inverse of :func:`show_glue_values`)."""
    for cell in _cells(nb):
        if cell.get("cell_type") == "markdown":
            source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
            cell["source"] = SHOWN_ROLE.sub(lambda m: f"{{glue:text}}`{m.group(1)}`", source)


def _contents_manager_class():
    from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager
    from jupytext.async_contentsmanager import build_async_jupytext_contents_manager_class

    base = build_async_jupytext_contents_manager_class(AsyncLargeFileManager)

    class BookContentsManager(base):
        """jupytext's contents manager that shows glued values in the prose (see the module doc)."""

        async def get(self, path, content=True, type=None, format=None, **kwargs):
            model = await super().get(path, content=content, type=type, format=format, **kwargs)
            if content and model.get("type") == "notebook" and model.get("content"):
                show_glue_values(model["content"])
            return model

        async def save(self, model, path=""):
            if model.get("type") == "notebook" and model.get("content"):
                restore_glue_roles(model["content"])
            return await super().save(model, path)

    return BookContentsManager


def __getattr__(name):
    if name == "BookContentsManager":  # built on first use: importing posteval.lab needs no Jupyter server
        cls = _contents_manager_class()
        globals()[name] = cls
        return cls
    raise AttributeError(name)

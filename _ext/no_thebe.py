"""Leave sphinx-thebe out of the pages: no Binder configuration, no live-code scripts.

Jupyter Book 1 loads sphinx-thebe on every build, and sphinx-thebe writes into every page a
``text/x-thebe-config`` script naming its template's Binder repository
(``binder-examples/jupyter-stacks-datascience``) whenever the book names none. This book runs offline
and has no Binder image: a reader runs a page with ``make lab CHAPTER=NN`` (each chapter page says
so). Once every extension is set up (``config-inited``), this extension disconnects sphinx-thebe's
handlers that add its scripts and its per-page configuration; its directive stays registered, unused.
"""

THEBE_HANDLERS = ("init_thebe_core", "update_thebe_context")


def drop_thebe(app, config) -> None:
    """Disconnect sphinx-thebe's asset and page handlers (those named in `THEBE_HANDLERS`)."""
    for listeners in app.events.listeners.values():
        for listener in list(listeners):
            handler = listener.handler
            if getattr(handler, "__module__", "") == "sphinx_thebe" and handler.__name__ in THEBE_HANDLERS:
                app.disconnect(listener.id)


def setup(app):
    app.connect("config-inited", drop_thebe)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

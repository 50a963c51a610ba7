"""Figures (tables, listings) numbered by chapter: "Figure 2.3" is the third figure of chapter 2.

Sphinx's ``numfig`` with ``numfig_secnum_depth: 0`` numbers figures through the whole book
("Figure 17"); numbering them by chapter the Sphinx way (a ``numbered`` toctree) would also number
every heading, and the chapters' headings carry their own numbers ("## 2.1 The problem"). This
extension keeps the headings as written and renumbers what Sphinx numbered, after Sphinx:

* a *chapter* is an entry of the root document's toctree whose caption is
  ``chapter_numbering_caption`` (``_toc.yml``'s part "Chapters"), numbered 1, 2, ... in that order;
  its sub-pages (``sections`` in ``_toc.yml``, at any depth) belong to it;
* a chapter's figures are numbered ``(chapter, k)`` in the order Sphinx met them (page by page,
  sub-pages where their toctree stands), each kind (figure, table, code-block) on its own;
* pages outside the chapters (front and back matter) keep a plain sequence of their own.

The numbers live where Sphinx keeps them (``env.toc_fignumbers``), so captions and ``{numref}``
show them alike ("Figure %s" with "%s" = "2.3").
"""

from sphinx import addnodes

CONFIG = "chapter_numbering_caption"


def chapters(env) -> list[list[str]]:
    """The documents of each chapter, chapter by chapter: the chapter page, then its sub-pages."""
    caption = env.config[CONFIG]
    root = env.get_doctree(env.config.root_doc)
    entries = []
    for toctree in root.findall(addnodes.toctree):
        if toctree.get("caption") == caption:
            entries += [doc for _title, doc in toctree["entries"] if doc in env.all_docs]
    result = []
    for doc in entries:
        docs, todo = [], [doc]
        while todo:
            current = todo.pop(0)
            if current not in docs:
                docs.append(current)
                todo = list(env.toctree_includes.get(current, [])) + todo
        result.append(docs)
    return result


def renumber(env) -> dict:
    """``env.toc_fignumbers`` with chapter numbers put in front: doc -> kind -> id -> (chapter, k)."""
    old = env.toc_fignumbers
    groups = [(i + 1, docs) for i, docs in enumerate(chapters(env))]
    in_chapter = {doc for _, docs in groups for doc in docs}
    groups.append((None, [doc for doc in old if doc not in in_chapter]))
    new = {}
    for chapter, docs in groups:
        found = [(number, doc, kind, ident) for doc in docs for kind, ids in old.get(doc, {}).items()
                 for ident, number in ids.items()]
        counters = {}
        for number, doc, kind, ident in sorted(found, key=lambda f: f[0]):
            counters[kind] = counters.get(kind, 0) + 1
            value = (counters[kind],) if chapter is None else (chapter, counters[kind])
            new.setdefault(doc, {}).setdefault(kind, {})[ident] = value
    return new


def assign(app, env) -> list[str]:
    """After Sphinx's own numbering (env-get-updated): renumber by chapter, return the pages changed."""
    if not env.config.numfig or not env.config[CONFIG]:
        return []
    new = renumber(env)
    changed = [doc for doc in set(new) | set(env.toc_fignumbers) if new.get(doc) != env.toc_fignumbers.get(doc)]
    env.toc_fignumbers = new
    return changed


def setup(app):
    app.add_config_value(CONFIG, "", "env", types=[str])
    # Sphinx's TocTreeCollector numbers at the default priority (500); this runs after it.
    app.connect("env-get-updated", assign, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}

